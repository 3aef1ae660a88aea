// The burn-in: the plan's cases run again in every window, each case given an equal share of
// the window as its sample budget (samples_for_budget). After each window rank 0 reads NVML,
// adds the window's record and the verdicts so far to the file's "burn_in" section (the file
// grows window by window; a stop signal keeps every finished window) and prints one line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "common/event_wait.hpp"
#include "device/clock_sync.hpp"
#include "driver/session.hpp"
#include "judgement/burn_in.hpp"
#include "topology/health.hpp"

namespace p2pbench {

namespace {
using json = nlohmann::json;
}  // namespace

void Session::burn_in() {
  const BurnInSettings& b = config_.burn_in;
  const int windows = b.windows();
  results_->set_cases_total(cases_.size() * size_t(windows));
  json log = {{"duration_s", b.duration_s}, {"window_s", b.window_s},    {"margin", b.margin},
              {"started_utc", utc_timestamp()}, {"windows_planned", windows}, {"inject_slow", b.to_json()["inject_slow"]},
              {"windows", json::array()},   {"verdicts", {{"status", "ok"}, {"items", json::array()}}}};
  json health = link_ ? link_->snapshot() : json();
  if (me_ == 0)
    std::printf("burn-in: %zu case(s) per window, %d windows of %.1f s (%.0f s)\n", cases_.size(), windows, b.window_s,
                b.duration_s);
  const auto t0 = std::chrono::steady_clock::now();
  // Each window's budget shrinks by how far the windows so far overran theirs (the steps
  // around the samples), agreed through the slowest rank's clock so every rank counts alike.
  double overrun = 1.0;
  for (int w = 0; w < windows && !fatal_; ++w) {
    const double start_s = seconds_since(t0);
    const std::string start_utc = utc_timestamp();
    const size_t first_row = results_->cases_done();
    runner_options_.slow_flow.reset();
    if (b.inject_slow && b.inject_slow->window == w)
      runner_options_.slow_flow = RunnerOptions::SlowFlow{{b.inject_slow->src_rank, b.inject_slow->dst_rank}, b.inject_slow->factor};
    const double share_s = b.window_s / double(cases_.size()) / overrun;
    for (size_t i = 0; i < cases_.size() && !fatal_; ++i) run_case(i, size_t(w) * cases_.size() + i, share_s, w);
    const double took_s = comm_.max(seconds_since(t0) - start_s, "agreeing on the window's length");
    // Damped: one slow window (the slowness a burn-in looks for) must not halve the next.
    overrun = std::clamp(overrun * std::clamp(took_s / b.window_s, 0.8, 1.25), 0.5, 20.0);
    finish_window(w, start_s, start_s + took_s, start_utc, first_row, log, health);
  }
  runner_options_.slow_flow.reset();
  if (me_ == 0)
    for (const std::string& line : burn_in_summary_lines(log, results_->rows())) std::printf("%s\n", line.c_str());
}

// The window's record: its times and rows, and on rank 0 NVML at its end against its start.
void Session::finish_window(int window, double start_s, double end_s, const std::string& start_utc, size_t first_row,
                            json& log, json& health_before) {
  json rows = json::array();
  for (size_t r = first_row; r < results_->cases_done(); ++r) rows.push_back(r);
  json record = {{"index", window},        {"start_s", start_s}, {"end_s", end_s},      {"start_utc", start_utc},
                 {"end_utc", utc_timestamp()}, {"rows", rows},       {"gpus", json::array()}};
  if (link_) {
    const json health_after = link_->snapshot();
    record["gpus"] = window_gpus(health_after, health_delta(health_before, health_after), facts_.layout);
    health_before = health_after;
  }
  log["windows"].push_back(record);
  log["verdicts"] = burn_in_verdicts(log["windows"], results_->rows(), config_.burn_in.margin);
  results_->set_section("burn_in", log);
  if (me_ == 0)
    std::printf("%s\n", window_progress_line(record, log["windows_planned"].get<int>(), config_.burn_in.duration_s,
                                             results_->rows())
                            .c_str());
  std::fflush(stdout);
}

}  // namespace p2pbench
