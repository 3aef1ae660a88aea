// --expect: the file's checks (bad input names --expect) and the PASS/FAIL/margin logic.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/errors.hpp"
#include "checked_row.hpp"
#include "judgement/expectations.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

json entry(json match, const char* metric, double reference, double limit, const char* pair_class = "NV18") {
  return {{"match", std::move(match)}, {"pair_class", pair_class}, {"metric", metric}, {"reference", reference},
          {std::string(metric) == "latency_us" ? "ceiling" : "floor", limit}};
}

json document(json entries) {
  return {{"format", "p2pbench-expectations"}, {"version", 1}, {"system", "h200-nv18"}, {"tolerance_pct", 5.0},
          {"made_with", {{"verify", true}, {"samples", 10}, {"min_sample_time_ms", 1.0}}},
          {"expectations", std::move(entries)}};
}

json ce_match(uint64_t bytes) {
  return {{"method", "ce"}, {"direction", "push"}, {"mode", "uni"}, {"bytes", bytes}, {"blocks", nullptr}};
}

CaseResult ce_case(uint64_t bytes, std::vector<double> samples, CaseStatus status = CaseStatus::kOk) {
  CaseResult r;
  r.spec.method = Method::kCe;
  r.spec.bytes = bytes;
  r.outcome.status = status;
  r.outcome.gbps = std::move(samples);
  if (status != CaseStatus::kOk) r.outcome.error = "verification failed";
  return r;
}

std::vector<CheckedCase> checked(const std::vector<CaseResult>& cases) {
  std::vector<CheckedCase> out;
  for (const CaseResult& r : cases) out.push_back(checked_case(r));
  return out;
}

// The judged cases' lines (an ok case no entry matches has none).
std::vector<std::string> lines_of(const ExpectationReport& r) {
  std::vector<std::string> lines;
  for (const JudgedCase& j : r.judged)
    if (!j.line.empty()) lines.push_back(j.line);
  return lines;
}

CaseResult latency_read_case(std::vector<double> samples_us) {
  CaseResult r;
  r.spec.method = Method::kLatencyRead;
  r.spec.bytes = 8;
  r.outcome.latency_us = std::move(samples_us);
  return r;
}

std::string write_temp(const std::string& text) {
  char name[] = "/tmp/p2pbench-expect-XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

std::string load_error(const std::string& text) {
  const std::string path = write_temp(text);
  try {
    load_expectations(path);
  } catch (const InputError& e) {
    std::remove(path.c_str());
    return e.what();
  }
  std::remove(path.c_str());
  return "";
}

TEST(Expectations, BadFilesNameTheFlagAndTheField) {
  EXPECT_NE(load_error("{not json").find("--expect = \"/tmp/p2pbench-expect-"), std::string::npos) << load_error("{not json");
  EXPECT_NE(load_error(R"({"format": "x", "version": 1, "expectations": []})").find("format: not an expectations file"),
            std::string::npos);
  EXPECT_NE(load_error(document(json::array()).dump().replace(document(json::array()).dump().find("\"version\":1"), 11,
                                                               "\"version\":2"))
                .find("version: 2 is not supported"),
            std::string::npos);
  json no_floor = document({entry(ce_match(1024), "bandwidth_gbps", 10, 9)});
  no_floor["expectations"][0].erase("floor");
  EXPECT_NE(load_error(no_floor.dump()).find("expectations[0]: a bandwidth_gbps entry needs a number 'floor'"),
            std::string::npos)
      << load_error(no_floor.dump());
  json bad_metric = document({entry(ce_match(1024), "bandwidth_gbps", 10, 9)});
  bad_metric["expectations"][0]["metric"] = "gbps";
  EXPECT_NE(load_error(bad_metric.dump()).find("metric \"gbps\" is not one of"), std::string::npos);
  EXPECT_EQ(load_error(document({entry(ce_match(1024), "bandwidth_gbps", 10, 9)}).dump()), "");
  EXPECT_THROW(load_expectations("/nonexistent/expect.json"), InputError);
}

TEST(Expectations, WhatExpectMakeRecordsOfItsSourcesIsAccepted) {
  json doc = document({entry(ce_match(1024), "bandwidth_gbps", 10, 9)});
  doc["sources"] = {{{"path", "a.json"}, {"commit", "unknown"}, {"dirty", nullptr}, {"verdicts", "warn: link errors"}}};
  doc["allow_warnings"] = true;
  doc["expectations"][0]["runs"] = 3;
  doc["expectations"][0]["worst_run_pct"] = 1.25;
  EXPECT_EQ(load_error(doc.dump()), "");
  json no_path = doc;
  no_path["sources"][0].erase("path");
  EXPECT_NE(load_error(no_path.dump()).find("sources: "), std::string::npos) << load_error(no_path.dump());
  json no_runs = doc;
  no_runs["expectations"][0]["runs"] = 0;
  EXPECT_NE(load_error(no_runs.dump()).find("expectations[0]: 'runs' must be an integer >= 1"), std::string::npos)
      << load_error(no_runs.dump());
  json negative = doc;
  negative["expectations"][0]["worst_run_pct"] = -1;
  EXPECT_NE(load_error(negative.dump()).find("'worst_run_pct' must be a number >= 0"), std::string::npos);
}

TEST(Expectations, RunMadeWithLessCareIsRefusedBeforeItStarts) {
  const json doc = document(json::array());
  EXPECT_NO_THROW(check_run_comparable(doc, {{"verify", true}, {"samples", 10}, {"min_sample_time_ms", 1.0}}, "e.json"));
  EXPECT_THROW(check_run_comparable(doc, {{"verify", false}, {"samples", 10}}, "e.json"), InputError);
  try {
    check_run_comparable(doc, {{"verify", true}, {"samples", 3}}, "e.json");
    FAIL() << "3 samples accepted against sources of 10";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--expect = e.json: made_with.samples"), std::string::npos) << e.what();
  }
}

TEST(Expectations, PassFailAndMargins) {
  const json doc = document({entry(ce_match(1u << 30), "bandwidth_gbps", 396.0, 376.2),
                             entry(ce_match(1u << 20), "bandwidth_gbps", 210.0, 200.0),
                             entry(ce_match(1u << 16), "bandwidth_gbps", 30.0, 25.0),
                             entry(ce_match(1u << 30), "bandwidth_gbps", 50.0, 47.5, "PIX"),
                             entry(ce_match(1u << 12), "bandwidth_gbps", 5.0, 4.0)});
  const std::vector<CaseResult> cases = {ce_case(1u << 30, {390.0, 400.0, 396.0}),  // median 396
                                         ce_case(1u << 20, {196.0, 198.0}),         // median 197 < 200
                                         ce_case(1u << 16, {}, CaseStatus::kFailed),
                                         ce_case(1u << 24, {100.0})};               // no expectation
  const ExpectationReport r = check_expectations(doc, checked(cases), "NV18");
  const std::vector<std::string> lines = lines_of(r);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "PASS ce push uni 1 GiB: 396 GB/s >= floor 376.2 GB/s, margin +19.8 GB/s (+5.3%)");
  EXPECT_EQ(lines[1], "FAIL ce push uni 1 MiB: 197 GB/s >= floor 200 GB/s, margin -3 GB/s (-1.5%)");
  EXPECT_EQ(lines[2].rfind("FAIL ce push uni 64 KiB: the case failed: verification failed", 0), 0u) << lines[2];
  ASSERT_EQ(r.judged.size(), 4u);
  EXPECT_EQ(r.judged[3].result, "NO EXPECTATION");
  EXPECT_EQ(r.judged[3].case_index, 3u);
  EXPECT_EQ(r.judged[1].entry_index, std::optional<size_t>(1));
  EXPECT_DOUBLE_EQ(*r.judged[1].margin, -3.0);
  EXPECT_EQ(r.passed, 1);
  EXPECT_EQ(r.failed, 2);
  EXPECT_TRUE(r.any_fail());
  EXPECT_EQ(r.without_expectation, 1);
  ASSERT_EQ(r.not_measured.size(), 1u);  // the 4 KiB entry; the PIX entry is another pair class
  EXPECT_EQ(r.not_measured[0], 4u);
  EXPECT_EQ(r.not_measured_lines[0], "ce push uni 4 KiB bandwidth_gbps");
  EXPECT_EQ(r.summary, "check FAIL: 1 PASS, 2 FAIL of 3 cases with an expectation; smallest margin -1.5% (ce push uni "
                       "1 MiB); 1 rows without expectation; 1 expectations not measured");
}

TEST(Expectations, LatencyCeilingAndNullMatching) {
  json match = {{"method", "latency_read"}, {"bytes", 8}, {"blocks", nullptr}};
  const json doc = document({entry(match, "latency_us", 0.85, 0.8925)});
  CaseResult latency = latency_read_case({0.85, 0.86, 0.84});  // no blocks: matches null
  ExpectationReport r = check_expectations(doc, checked({latency}), "NV18");
  ASSERT_EQ(lines_of(r).size(), 1u);
  EXPECT_EQ(lines_of(r)[0], "PASS latency_read 8 B: 0.85 us <= ceiling 0.8925 us, margin +0.0425 us (+4.8%)");
  latency.spec.blocks = 132;  // a shape the entry does not have
  r = check_expectations(doc, checked({latency}), "NV18");
  EXPECT_TRUE(lines_of(r).empty());
  EXPECT_EQ(r.without_expectation, 1);
  EXPECT_TRUE(check_expectations(doc, checked({latency_read_case({0.95})}), "NV18").any_fail());
}

// An interference case's figure is its transfer beside the workload (its row's bandwidth_gbps),
// and its own variables are matched as its row names them.
TEST(Expectations, InterferenceFigureIsTheTransferBesideTheWorkload) {
  const json match = {{"method", "interference"}, {"engine", "ldst"}, {"workload", "gemm"}, {"sm_partition", 16}};
  const json doc = document({entry(match, "bandwidth_gbps", 300.0, 285.0)});
  CaseResult r;
  r.spec.method = Method::kInterference;
  r.spec.engine = Method::kLdst;
  r.spec.workload = "gemm";
  r.spec.sm_partition = 16;
  r.outcome.gbps = {290.0, 292.0, 288.0};  // together with the workload
  r.outcome.interference.emplace();
  r.outcome.interference->transfer_alone_gbps = {390.0};
  ExpectationReport report = check_expectations(doc, checked({r}), "NV18");
  ASSERT_EQ(lines_of(report).size(), 1u);
  EXPECT_EQ(lines_of(report)[0].rfind("PASS interference engine=ldst sm_partition=16 workload=gemm: 290 GB/s", 0), 0u)
      << lines_of(report)[0];
  r.spec.sm_partition = 0;
  EXPECT_TRUE(lines_of(check_expectations(doc, checked({r}), "NV18")).empty()) << "another partition is another case";
}

// What an expectation matches is the row's own fields: identity_fields is the row's subset.
TEST(Expectations, IdentityIsTheRowsOwnFields) {
  CaseResult r = ce_case(1u << 20, {200.0});
  r.spec.blocks = 8;
  r.outcome.buffer_pool_bytes = 1u << 24;
  r.outcome.time_us = {5.0};
  const json row = result_row(r.spec, r.outcome);
  const json identity = identity_fields(r.spec, r.outcome);
  ASSERT_EQ(identity["blocks"], 8);
  for (const auto& [key, value] : identity.items()) {
    ASSERT_TRUE(row.contains(key)) << key;
    EXPECT_EQ(row[key], value) << key;
  }
}

// One judgement: a run's cases (checked_case) and the same cases read from their rows
// (checked_row, what p2pbench-check reads) get the same results, figures and margins.
TEST(Expectations, TheRunAndItsFileAreJudgedAlike) {
  const json doc = document({entry(ce_match(1u << 30), "bandwidth_gbps", 396.0, 376.2),
                             entry(ce_match(1u << 20), "bandwidth_gbps", 210.0, 200.0),
                             entry({{"method", "latency_read"}, {"bytes", 8}}, "latency_us", 0.85, 0.8925),
                             entry({{"method", "interference"}, {"engine", "ldst"}}, "bandwidth_gbps", 300.0, 285.0)});
  std::vector<CaseResult> cases = {ce_case(1u << 30, {390.0, 400.0, 396.0}), ce_case(1u << 20, {}, CaseStatus::kFailed),
                                   latency_read_case({0.85, 0.95}), ce_case(1u << 24, {100.0})};
  CaseResult interference;
  interference.spec.method = Method::kInterference;
  interference.spec.engine = Method::kLdst;
  interference.outcome.gbps = {280.0, 290.0};
  interference.outcome.interference.emplace();
  cases.push_back(interference);
  std::vector<json> rows;
  for (CaseResult& r : cases) {
    if (r.outcome.status == CaseStatus::kOk && !r.outcome.gbps.empty()) r.outcome.time_us = {1.0};
    rows.push_back(result_row(r.spec, r.outcome));
  }
  std::vector<CheckedCase> from_rows;
  for (const json& row : rows) from_rows.push_back(checked_row(row));
  const ExpectationReport run = check_expectations(doc, checked(cases), "NV18");
  const ExpectationReport file = check_expectations(doc, from_rows, "NV18");
  ASSERT_EQ(run.judged.size(), 5u);
  ASSERT_EQ(file.judged.size(), run.judged.size());
  for (size_t i = 0; i < run.judged.size(); ++i) {
    EXPECT_EQ(file.judged[i].result, run.judged[i].result) << i;
    EXPECT_EQ(file.judged[i].entry_index, run.judged[i].entry_index) << i;
    EXPECT_EQ(file.judged[i].figure, run.judged[i].figure) << i;
    EXPECT_EQ(file.judged[i].line, run.judged[i].line) << i;
  }
  EXPECT_EQ(file.summary, run.summary);
  EXPECT_EQ(run.passed, 2);  // 1 GiB and the interference case; the latency median 0.9 is above its ceiling
}

TEST(Expectations, ReportBlockAndExitStatus) {
  const json doc = document({entry(ce_match(1u << 30), "bandwidth_gbps", 396.0, 376.2)});
  const json meta = {{"topology", {{"topo_label", "NV18"}}}, {"verdicts", {{"contention", true}}}};
  std::FILE* out = std::tmpfile();
  EXPECT_EQ(report_expectations(out, doc, {ce_case(1u << 30, {396.0})}, meta), 0);
  EXPECT_EQ(report_expectations(out, doc, {ce_case(1u << 30, {300.0})}, meta), 1);
  EXPECT_EQ(report_expectations(out, doc, {ce_case(1u << 30, {396.0})}, json::object()), 1);  // pair class unknown
  EXPECT_EQ(report_expectations(out, json(), {}, meta), 0);
  std::rewind(out);
  std::string text(4096, '\0');
  text.resize(std::fread(&text[0], 1, text.size(), out));
  std::fclose(out);
  EXPECT_NE(text.find("WARNING: the health verdicts say another process used the GPUs"), std::string::npos) << text;
  EXPECT_NE(text.find("NOT CHECKED"), std::string::npos) << text;
  EXPECT_NE(text.find("check FAIL: 0 PASS, 1 FAIL"), std::string::npos) << text;
}

}  // namespace
}  // namespace p2pbench
