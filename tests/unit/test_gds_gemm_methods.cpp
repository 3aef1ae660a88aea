// The one-GPU methods gds_* and gemm without a GPU: their config section, their cases and the
// fields their rows add. Their runs are GPU tests (tests/gpu_driver/gds_gemm_checks.py).
#include <gtest/gtest.h>

#include <cmath>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "config_error.hpp"
#include "plan/sweep.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

json gds_doc(json section) {
  json d{{"methods", {"gds_read", "gds_write_bounce"}}, {"sizes", {"1MiB"}}};
  if (!section.is_null()) d["gds"] = std::move(section);
  return d;
}

std::string error_of(const json& doc) { return testing::config_error_of(doc); }

TEST(GdsConfig, DirectoryMustBeAnExistingAbsoluteDirectory) {
  const Method gds_read = *parse_method("gds_read");
  EXPECT_EQ(parse_config(gds_doc(json{{"directory", "/tmp"}})).settings_of(gds_read)["directory"], "/tmp");
  EXPECT_TRUE(parse_config(gds_doc(nullptr)).settings_of(gds_read)["directory"].is_null());
  for (const json& bad : {json{{"directory", "/no/such/p2pbench/dir"}}, json{{"directory", "tmp"}},
                          json{{"directory", ""}}, json{{"directory", 3}}}) {
    const std::string msg = error_of(gds_doc(bad));
    EXPECT_NE(msg.find("gds.directory"), std::string::npos) << bad.dump() << ": " << msg;
  }
  EXPECT_NE(error_of(gds_doc(json{{"dir", "/tmp"}})).find("gds.dir"), std::string::npos);
  EXPECT_NE(error_of(gds_doc("/tmp")).find("gds"), std::string::npos);
  EXPECT_EQ(parse_config(gds_doc(json{{"directory", "/tmp"}})).to_json()["gds"]["directory"], "/tmp");
}

TEST(GdsPlan, CasesRunOnEachRanksOwnGpuWithTheDirectory) {
  const auto cases = expand_cases(parse_config(gds_doc(json{{"directory", "/tmp"}})));
  ASSERT_EQ(cases.size(), 4u);  // two methods, two ranks, one size
  for (const CaseSpec& c : cases) {
    EXPECT_EQ(c.src_rank(), c.dst_rank());
    EXPECT_EQ(c.settings["directory"], "/tmp");
    EXPECT_EQ(c.name().find("/tmp"), std::string::npos);  // a condition of the run, not of the case
  }
  for (const CaseSpec& c : expand_cases(parse_config(gds_doc(nullptr)))) EXPECT_TRUE(c.settings["directory"].is_null());
  // Other methods never carry it.
  json d = gds_doc(json{{"directory", "/tmp"}});
  d["methods"] = {"h2d"};
  for (const CaseSpec& c : expand_cases(parse_config(d))) EXPECT_TRUE(c.settings.is_null());
}

TEST(GemmPlan, SweepsGemmKWithBytesAsTheF32D) {
  const Config c = parse_config(json{{"methods", {"gemm"}}, {"sizes", {"4MiB"}}, {"gemm", {{"gemm_k", {512, 1024}}}}});
  const auto cases = expand_cases(c);
  ASSERT_EQ(cases.size(), 4u);  // two K, two ranks
  EXPECT_EQ(cases[0].name(), "gemm/push/uni/0->0/bytes:4194304/k:512");
  EXPECT_EQ(parse_config(json{{"methods", {"gemm"}}, {"sizes", {"4MiB"}}}).kernel_axes.of(cases[0].method, ShapeAxis::kGemmK),
            std::vector<uint64_t>{8192});
  EXPECT_THROW(validate_kernel_axes(parse_config(json{{"methods", {"gemm"}}, {"sizes", {"4MiB"}}, {"gemm", {{"gemm_k", {100}}}}})),
               InputError);  // not a multiple of 16
}

TEST(GemmRow, AddsTheGemmAndItsTflopsPerSample) {
  CaseSpec c;
  c.method = *parse_method("gemm");
  c.bytes = 4ull << 20;  // m = n = 1024
  c.gemm_k = 512;
  c.flows = {{0, 0}};
  CaseOutcome o;
  o.verified = true;
  o.iterations = 4;
  o.gbps = {100, 200};
  o.time_us = {10, 20};
  o.flows = {FlowSamples::named({0, 0}, c.bytes)};
  o.flows[0].gbps = o.gbps;
  o.flows[0].time_us = o.time_us;
  o.flows[0].window_ns = {40e3, 80e3};
  GroupFacts facts;
  facts.layout.gpu_of_rank = {"A"};
  facts.layout.node_of_rank = {0};
  facts.peak_gbps.assign(1, std::vector<std::optional<double>>(1));
  const json row = result_row(c, o, facts);
  const double flops = 2.0 * 1024 * 1024 * 512;
  EXPECT_EQ(row["gemm"]["m"], 1024);
  EXPECT_EQ(row["gemm"]["k"], 512);
  EXPECT_DOUBLE_EQ(row["gemm"]["flops"].get<double>(), flops);
  ASSERT_EQ(row["samples_tflops"].size(), 2u);
  EXPECT_NEAR(row["samples_tflops"][0].get<double>(), flops / 10e-6 / 1e12, 1e-9);
  EXPECT_NEAR(row["samples_tflops"][1].get<double>(), flops / 20e-6 / 1e12, 1e-9);
  EXPECT_FALSE(row.contains("gemm_rs"));  // the pipeline's fields are the gemm_rs methods'
  EXPECT_FALSE(row.contains("engine_mode"));
  // engine_mode is a field the gds methods declare: a gemm row has none, whatever its engine said.
  o.engine_mode = "posix_odirect on ext4";
  EXPECT_FALSE(result_row(c, o, facts).contains("engine_mode"));
  c.method = *parse_method("gds_read_bounce");
  const json gds = result_row(c, o, facts);
  EXPECT_EQ(gds["engine_mode"], "posix_odirect on ext4");
  EXPECT_FALSE(gds.contains("gemm"));
  EXPECT_FALSE(gds.contains("tflops"));
}

}  // namespace
}  // namespace p2pbench
