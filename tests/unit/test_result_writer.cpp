#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/errors.hpp"
#include "example_results.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;
using namespace p2pbench::testing;

TEST(ResultRow, UniRowHasEveryFieldAsNumbers) {
  CaseOutcome o = ok_outcome(100);
  o.sms_used = 8;
  const json row = result_row(spec(Method::kLdst, Direction::kPush, Mode::kUni, 1 << 20), o);
  for (const char* key : {"method", "direction", "mode", "bytes", "src_rank", "dst_rank", "blocks", "threads", "unroll",
                          "smem_bytes", "stages", "sms_used", "gbps_per_sm", "iterations", "samples", "bandwidth_gbps",
                          "time_us", "samples_gbps", "verified", "status"})
    EXPECT_TRUE(row.contains(key)) << key;
  EXPECT_TRUE(row["bytes"].is_number_unsigned());
  EXPECT_TRUE(row["bandwidth_gbps"]["median"].is_number_float());
  EXPECT_EQ(row["samples"], 10);
  EXPECT_TRUE(row["smem_bytes"].is_null());
  EXPECT_EQ(row["status"], "ok");
  EXPECT_NEAR(row["gbps_per_sm"].get<double>(), row["bandwidth_gbps"]["median"].get<double>() / 8, 1e-9);
  EXPECT_TRUE(row["overlap"].is_null());
  EXPECT_EQ(row["pattern"], "matrix");
  ASSERT_EQ(row["flows"].size(), 1u);
  EXPECT_EQ(row["flows"][0]["src_gpu"], "gpu0");
  EXPECT_EQ(row["flows"][0]["dst_gpu"], "gpu1");
  EXPECT_FALSE(row["flows"][0]["same_device"].get<bool>());
}

TEST(ResultRow, BidirRowCarriesOverlapAndDirections) {
  const json doc = example_document();
  const json& row = doc["results"][1];
  EXPECT_EQ(row["mode"], "bidir");
  EXPECT_TRUE(row["src_rank"].is_null());
  EXPECT_DOUBLE_EQ(row["overlap"].get<double>(), 0.99);
  ASSERT_EQ(row["flows"].size(), 2u);
  EXPECT_EQ(row["flows"][1]["src_rank"], 1);
  EXPECT_EQ(row["flows"][1]["dst_rank"], 0);
  ASSERT_EQ(row["gpus"].size(), 2u);
  EXPECT_TRUE(row["gpus"][0]["egress_gbps"].is_number());
}

TEST(ResultRow, GroupRowsMarkSameDevicePairsAndSumThePeaks) {
  using namespace p2pbench::testing;
  GroupFacts facts;
  facts.layout.gpu_of_rank = {"A", "B", "A", "B"};
  facts.layout.node_of_rank = {0, 0, 0, 0};
  facts.peak_gbps.assign(4, std::vector<std::optional<double>>(4));
  facts.peak_gbps[0][1] = facts.peak_gbps[2][3] = 450.0;
  CaseSpec c = spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 20);
  c.pattern = Pattern::kFlows;
  c.flows = {{0, 1}, {2, 3}, {0, 2}};
  CaseOutcome o = ok_outcome(600);
  o.flows = {ok_outcome(300).flows[0], ok_outcome(300, 10, {2, 3}).flows[0], ok_outcome(900, 10, {0, 2}).flows[0]};
  o.overlap.assign(10, 0.98);
  const json row = result_row(c, o, facts);
  EXPECT_EQ(row["pattern"], "flows");
  EXPECT_TRUE(row["src_rank"].is_null());
  EXPECT_TRUE(row["flows"][2]["same_device"].get<bool>());
  EXPECT_TRUE(row["flows"][2]["peak_gbps"].is_null());
  EXPECT_NEAR(row["flows"][0]["pct_of_peak"].get<double>(), 100.0 * row["flows"][0]["bandwidth_gbps"]["median"].get<double>() / 450, 1e-9);
  EXPECT_TRUE(row["aggregate"]["peak_gbps"].is_null());  // one flow's peak is unknown
  ASSERT_EQ(row["gpus"].size(), 2u);
  EXPECT_EQ(row["gpus"][0]["ranks"], json({0, 2}));
  // GPU A sends flows 0->1, 2->3 and 0->2: three flows' bytes over the longest of their windows.
  const double bytes = double(c.bytes) * 4;
  const double longest_ns = o.flows[0].window_ns[4];  // the 300 GB/s flows' windows are the longest
  EXPECT_NEAR(row["gpus"][0]["egress_gbps"].get<double>(), 3 * bytes / (longest_ns * 1e-9) / 1e9, 1e-3 * 3 * bytes / longest_ns);  // median: samples 4 and 5
}

TEST(ResultRow, FailedAndSkippedRowsHaveNoFigures) {
  const json doc = example_document();
  const json& failed = doc["results"][6];
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_TRUE(failed["bandwidth_gbps"].is_null());
  EXPECT_FALSE(failed["verified"].get<bool>());
  EXPECT_NE(failed["error"].get<std::string>().find("first bad offset 17"), std::string::npos);
  EXPECT_EQ(doc["results"][7]["status"], "skipped");
}

TEST(ResultRow, PointerChaseRowsCarryCyclesAndThePeakClockFigure) {
  const json doc = example_document();
  const json& row = doc["results"].back();
  ASSERT_EQ(row["method"], "latency_read");
  EXPECT_DOUBLE_EQ(row["latency_us"]["median"].get<double>(), 0.852);
  EXPECT_DOUBLE_EQ(row["cycles"]["median"].get<double>(), 1640);
  EXPECT_NEAR(row["latency_at_peak_clock_us"]["median"].get<double>(), 1640 / 1980.0, 1e-12);
  EXPECT_TRUE(row["bandwidth_gbps"].is_null());
}

TEST(Summary, BestAndKnee) {
  const json summary = example_document()["summary"];
  const json* ldst = nullptr;
  for (const json& e : summary)
    if (e["method"] == "ldst") ldst = &e;
  ASSERT_NE(ldst, nullptr);
  EXPECT_EQ((*ldst)["best"]["blocks"], 32);
  // 8 blocks give 368 (>= 90% of ~375): the knee; 4 blocks give 184.
  EXPECT_EQ((*ldst)["knee"]["sms_used"], 8);
  const json* ce = nullptr;
  for (const json& e : summary)
    if (e["method"] == "ce" && e["mode"] == "uni") ce = &e;
  ASSERT_NE(ce, nullptr);
  EXPECT_TRUE((*ce)["knee"].is_null());
}

TEST(Summary, KneeIsTakenAtTheBestsMessageSize) {
  std::vector<CaseResult> cases;
  auto add = [&](uint64_t bytes, int blocks, double gbps) {
    CaseOutcome o = ok_outcome(gbps);
    o.sms_used = blocks;
    cases.push_back({spec(Method::kLdst, Direction::kPush, Mode::kUni, bytes, blocks), o});
  };
  add(1 << 30, 132, 370);
  add(1 << 30, 8, 300);    // 81% of the best: not the knee
  add(1 << 30, 16, 350);   // 95%: the knee at 1 GiB
  add(16 << 20, 4, 360);   // 97% of the best, but at 16 MiB: must not count
  const json summary = summarize_cases(cases, GroupFacts::of(GroupLayout::distinct(2)));
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0]["knee"]["sms_used"], 16);
  EXPECT_EQ(summary[0]["knee"]["bytes"], 1 << 30);
}

TEST(WriteAtomically, ReplacesOnlyWhenComplete) {
  const std::string path = ::testing::TempDir() + "/results.json";
  std::ofstream(path) << "old";
  write_json_atomically(path, json{{"a", 1}});
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(json::parse(text.str())["a"], 1);
  EXPECT_THROW(write_json_atomically("/nonexistent-dir/results.json", json{{"a", 1}}), RuntimeFailure);
}

TEST(Document, MarksIncompleteRuns) {
  const json doc = result_document(example_meta(), {}, json(), true, "stopped after a fatal error");
  EXPECT_TRUE(doc["incomplete"].get<bool>());
  EXPECT_EQ(doc["schema_version"], 2);
  EXPECT_EQ(doc["incomplete_reason"], "stopped after a fatal error");
}

}  // namespace
}  // namespace p2pbench

namespace p2pbench {
namespace {

TEST(ResultRow, PercentOfPeakUsesBothDirectionsForBidir) {
  using namespace p2pbench::testing;
  const nlohmann::json uni = result_row(spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 30), ok_outcome(400), 500.0);
  EXPECT_NEAR(uni["pct_of_peak"].get<double>(), 100.0 * uni["bandwidth_gbps"]["median"].get<double>() / 500.0, 1e-9);
  const CaseOutcome bidir = bidir_outcome(400, 1.0);
  const nlohmann::json b = result_row(spec(Method::kCe, Direction::kPush, Mode::kBidir, 1 << 30), bidir, 500.0);
  EXPECT_NEAR(b["pct_of_peak"].get<double>(), 100.0 * b["bandwidth_gbps"]["median"].get<double>() / 1000.0, 1e-9);
  EXPECT_TRUE(result_row(spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 30), ok_outcome(400))["pct_of_peak"].is_null());
}

}  // namespace
}  // namespace p2pbench

namespace p2pbench {
namespace {

TEST(Comparison, BestMethodPerBandWithSpeedups) {
  using namespace p2pbench::testing;
  std::vector<CaseResult> cases;
  cases.push_back({spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 30), ok_outcome(390)});
  cases.push_back({spec(Method::kLdst, Direction::kPush, Mode::kUni, 1 << 30), ok_outcome(370)});
  cases.push_back({spec(Method::kLdst, Direction::kPush, Mode::kUni, 1 << 20), ok_outcome(300)});
  cases.push_back({spec(Method::kStaged, Direction::kPush, Mode::kUni, 1 << 30), ok_outcome(39)});
  const nlohmann::json comparison = compare_methods(cases, GroupFacts::pair(478.0));
  ASSERT_EQ(comparison.size(), 2u);  // push: 64 KiB - 4 MiB and >= 64 MiB
  EXPECT_EQ(comparison[0]["band"], "64 KiB - 4 MiB");
  EXPECT_EQ(comparison[0]["method"], "ldst");
  EXPECT_TRUE(comparison[0]["speedup_over_staged"].is_null());
  EXPECT_EQ(comparison[1]["method"], "ce");
  EXPECT_NEAR(comparison[1]["speedup_over_staged"].get<double>(), 10.0, 0.01);
  EXPECT_NEAR(comparison[1]["pct_of_peak"].get<double>(), 100.0 * comparison[1]["bandwidth_gbps"].get<double>() / 478.0, 1e-9);
  EXPECT_EQ(comparison_lines(comparison).size(), 2u);
}

}  // namespace
}  // namespace p2pbench
