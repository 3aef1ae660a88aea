// The burn-in's rules on synthetic windows: its config, the sample budget, the tails of a row,
// and the verdicts that must name the slow window, the error burst and the throttled window.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "config/burn_in_config.hpp"
#include "judgement/burn_in.hpp"
#include "measure/case_procedure.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {
namespace {

using json = nlohmann::json;

KeyNamer plain() {
  return [](const std::string& k) { return k; };
}

// A window's row of flow src->dst: its median and its slowest transfer, in GB/s.
json row(int window, int src, int dst, double median, double slowest) {
  json flow = {{"src_rank", src},   {"dst_rank", dst}, {"src_gpu", "GPU-" + std::to_string(src)},
               {"dst_gpu", "GPU-" + std::to_string(dst)}, {"bytes", 1 << 26},
               {"bandwidth_gbps", {{"median", median}, {"min", slowest}}}, {"gbps_min_iteration", slowest}};
  return {{"window", window}, {"status", "ok"}, {"method", "ce"}, {"direction", "push"}, {"mode", "uni"},
          {"flows", json::array({flow})}};
}

json window(int index, json gpus = json::array()) {
  return {{"index", index}, {"start_s", 10.0 * index}, {"end_s", 10.0 * (index + 1)}, {"gpus", gpus}};
}

json gpu(const std::string& uuid, double crc_on_link_3, std::vector<std::string> reasons = {}) {
  return {{"uuid", uuid},
          {"clock_event_reasons", reasons},
          {"nvlink_errors_delta", {{"crc_data", crc_on_link_3}}},
          {"nvlink_errors_by_link_delta", json::array({{{"link", 3}, {"crc_data", crc_on_link_3}, {"replay", 0}}})}};
}

std::vector<json> steady_rows_with_slow_window(int slow) {
  std::vector<json> rows;
  for (int w = 0; w < 6; ++w) rows.push_back(row(w, 0, 1, 50.0, w == slow ? 20.0 : 49.5));
  return rows;
}

TEST(BurnInConfig, ParsesWindowsAndTheInjection) {
  BurnInSettings b;
  parse_burn_in_section(json::parse(R"({"duration_s": 300, "window_s": 10,
      "inject_slow": {"window": 12, "src_rank": 1, "dst_rank": 0, "factor": 3}})"), plain(), b);
  EXPECT_EQ(b.windows(), 30);
  ASSERT_TRUE(b.inject_slow);
  EXPECT_EQ(b.inject_slow->window, 12);
  EXPECT_EQ(b.inject_slow->src_rank, 1);
  EXPECT_DOUBLE_EQ(b.inject_slow->factor, 3.0);
  BurnInSettings again;
  parse_burn_in_section(b.to_json(), plain(), again);
  EXPECT_EQ(again.to_json(), b.to_json());
}

TEST(BurnInConfig, RefusesWhatCouldNotRunNamingTheKey) {
  const char* bad[] = {R"({"window_s": 10})", R"({"duration_s": 5, "window_s": 10})", R"({"duration_s": -1})",
                       R"({"duration_s": 30, "margin": 1.5})", R"({"duration_s": 30, "inject_slow": {"window": 3}})",
                       R"({"duration_s": 30, "inject_slow": {"window": 1, "factor": 0.5}})", R"({"duration_s": 30, "x": 1})"};
  for (const char* text : bad) {
    BurnInSettings b;
    try {
      parse_burn_in_section(json::parse(text), plain(), b);
      ADD_FAILURE() << "accepted " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("burn_in"), std::string::npos) << e.what();
    }
  }
}

TEST(BurnInBudget, FillsTheShareWithAtLeastTheConfiguredSamples) {
  EXPECT_EQ(samples_for_budget(10, 0.0, 0.02), 10);       // no budget: the config's count
  EXPECT_EQ(samples_for_budget(10, 5.0, 0.0), 10);        // unknown sample length
  EXPECT_EQ(samples_for_budget(3, 10.0, 0.096), 100);     // 10 s / (96 + 4 ms)
  EXPECT_EQ(samples_for_budget(3, 0.05, 0.096), 3);       // a share shorter than one sample
  EXPECT_EQ(samples_for_budget(1, 1e9, 1e-6), kMaxBudgetSamples);
}

TEST(Tails, QuantilesOfTransferTimes) {
  std::vector<double> times;
  for (int i = 1; i <= 1000; ++i) times.push_back(double(i));
  const json t = tails_json(times);
  EXPECT_EQ(t["count"], 1000);
  EXPECT_DOUBLE_EQ(t["p50"].get<double>(), 500.5);
  EXPECT_DOUBLE_EQ(t["p90"].get<double>(), 900.1);
  EXPECT_DOUBLE_EQ(t["p99"].get<double>(), 990.01);
  EXPECT_DOUBLE_EQ(t["p99_9"].get<double>(), 999.001);
  EXPECT_DOUBLE_EQ(t["max"].get<double>(), 1000.0);
  EXPECT_TRUE(tails_json({}).is_null());
}

TEST(BurnInVerdicts, NameTheSlowWindowAndFlow) {
  json windows = json::array();
  for (int w = 0; w < 6; ++w) windows.push_back(window(w));
  const json v = burn_in_verdicts(windows, steady_rows_with_slow_window(4), 0.10);
  EXPECT_EQ(v["status"], "warn");
  ASSERT_EQ(v["items"].size(), 1u);
  const json& i = v["items"][0];
  EXPECT_EQ(i["code"], "intermittent_flow");
  EXPECT_EQ(i["window"], 4);
  EXPECT_EQ(i["src_rank"], 0);
  EXPECT_EQ(i["dst_rank"], 1);
  EXPECT_DOUBLE_EQ(i["evidence"]["window_slowest_gbps"].get<double>(), 20.0);
}

TEST(BurnInVerdicts, SteadyWindowsWithinTheMarginAreOk) {
  json windows = json::array();
  std::vector<json> rows;
  for (int w = 0; w < 6; ++w) {
    windows.push_back(window(w));
    rows.push_back(row(w, 0, 1, 50.0, 46.0));  // 8% below: inside a 10% margin
  }
  const json v = burn_in_verdicts(windows, rows, 0.10);
  EXPECT_EQ(v["status"], "ok");
  EXPECT_TRUE(v["items"].empty());
}

TEST(BurnInVerdicts, ErrorsInTheSlowWindowAreABurstOnTheirLink) {
  json windows = json::array();
  for (int w = 0; w < 6; ++w) windows.push_back(window(w, json::array({gpu("GPU-0", w == 4 ? 300 : 0)})));
  const json v = burn_in_verdicts(windows, steady_rows_with_slow_window(4), 0.10);
  bool burst = false;
  for (const json& i : v["items"])
    if (i["code"] == "error_burst") {
      burst = true;
      EXPECT_EQ(i["window"], 4);
      EXPECT_EQ(i["link"], 3);
      EXPECT_EQ(i["counter"], "crc_data");
      EXPECT_EQ(i["gpu_uuid"], "GPU-0");
    }
  EXPECT_TRUE(burst) << v.dump(2);
}

TEST(BurnInVerdicts, ErrorsInFastWindowsAreOnlyInformation) {
  json windows = json::array();
  std::vector<json> rows;
  for (int w = 0; w < 4; ++w) {
    windows.push_back(window(w, json::array({gpu("GPU-1", w == 2 ? 12 : 0)})));
    rows.push_back(row(w, 0, 1, 50.0, 49.0));
  }
  const json v = burn_in_verdicts(windows, rows, 0.10);
  EXPECT_EQ(v["status"], "ok");
  ASSERT_EQ(v["items"].size(), 1u);
  EXPECT_EQ(v["items"][0]["code"], "errors_in_fast_windows");
  EXPECT_EQ(v["items"][0]["evidence"]["windows"], json::array({2}));
}

TEST(BurnInVerdicts, ThrottlingIsNamedPerWindowButIdleIsNot) {
  json windows = json::array({window(0, json::array({gpu("GPU-0", 0, {"gpu_idle"})})),
                              window(1, json::array({gpu("GPU-0", 0, {"sw_thermal_slowdown"})}))});
  const json v = burn_in_verdicts(windows, {row(0, 0, 1, 50, 49), row(1, 0, 1, 50, 49)}, 0.10);
  ASSERT_EQ(v["items"].size(), 1u);
  EXPECT_EQ(v["items"][0]["code"], "throttled_window");
  EXPECT_EQ(v["items"][0]["window"], 1);
}

TEST(BurnInWindows, GpuRecordTakesTheEndSnapshotAndTheDelta) {
  const json end = {{"gpus", json::array({{{"uuid", "GPU-a"}, {"pci_bus_id", "0:6"}, {"temperature_c", 41},
                                            {"power_w", 300.5}, {"clocks_mhz", {{"sm", 1980}, {"mem", 3201}}},
                                            {"clock_event_reasons", {{"names", json::array()}, {"raw", 0}}}}})}};
  const json delta = {{"gpus", json::array({{{"uuid", "GPU-a"}, {"nvlink_errors", {{"crc_data", 7}}},
                                              {"nvlink_errors_by_link", json::array()}, {"violation_ns", {{"power", 0}}}}})}};
  GroupLayout layout = GroupLayout::distinct(2);
  layout.gpu_of_rank = {"GPU-a", "GPU-a"};
  const json g = window_gpus(end, delta, layout)[0];
  EXPECT_EQ(g["ranks"], json::array({0, 1}));
  EXPECT_EQ(g["sm_clock_mhz"], 1980);
  EXPECT_EQ(g["nvlink_errors_delta"]["crc_data"], 7);
  EXPECT_EQ(g["temperature_c"], 41);
}

TEST(BurnInSummary, SaysWindowsFlowsAndFindings) {
  json windows = json::array();
  for (int w = 0; w < 6; ++w) windows.push_back(window(w));
  const auto rows = steady_rows_with_slow_window(4);
  json burn_in = {{"windows", windows}, {"windows_planned", 6}, {"window_s", 10.0}, {"margin", 0.1}};
  burn_in["verdicts"] = burn_in_verdicts(windows, rows, 0.1);
  const auto lines = burn_in_summary_lines(burn_in, rows);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_NE(lines[0].find("6 of 6 windows"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("worst window 4"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("WARN intermittent_flow"), std::string::npos) << lines[2];
  const std::string progress = window_progress_line(windows[2], 6, 60.0, rows);
  EXPECT_NE(progress.find("window 3/6"), std::string::npos) << progress;
  EXPECT_NE(progress.find("30 s left"), std::string::npos) << progress;
}

}  // namespace
}  // namespace p2pbench
