// Sample statistics and the time-window arithmetic of bidirectional runs. Pure C++.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

namespace p2pbench {

struct Summary {
  double min = 0, median = 0, mean = 0, max = 0, stdev = 0;  // stdev: sample (n-1) standard deviation
};

// Summary of a non-empty sample set (throws std::invalid_argument when empty).
Summary summarize(const std::vector<double>& samples);
nlohmann::json to_json(const Summary& s);
// The summary of `samples` as JSON, or null where there are none (a case without figures).
nlohmann::json summary_json_or_null(const std::vector<double>& samples);

// Value at fraction q (0..1) of the sorted samples, linear interpolation between ranks.
double quantile(std::vector<double> samples, double q);

// The tails of a set of times: {"count", "p50", "p90", "p99", "p99_9", "max"}, or null where
// there are none. p99.9 of fewer than 1000 values interpolates toward the maximum: count says
// how many values stand behind it.
nlohmann::json tails_json(const std::vector<double>& values);

// A closed interval of time [start, end] in nanoseconds, on one (host-aligned) time line.
struct Window {
  double start_ns = 0;
  double end_ns = 0;
  double length() const { return end_ns - start_ns; }
};

struct WindowPair {
  double union_ns = 0;         // time at least one window was open (gaps not counted)
  double intersection_ns = 0;  // time both were open
  double overlap() const { return union_ns > 0 ? intersection_ns / union_ns : 0.0; }
};

// Union and intersection of two windows (each must have end >= start).
WindowPair combine(const Window& a, const Window& b);

}  // namespace p2pbench
