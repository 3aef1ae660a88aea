#include "stats/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace p2pbench {

double quantile(std::vector<double> samples, double q) {
  if (samples.empty()) throw std::invalid_argument("quantile of an empty sample set");
  std::sort(samples.begin(), samples.end());
  const double pos = q * double(samples.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, samples.size() - 1);
  return samples[lo] + (samples[hi] - samples[lo]) * (pos - double(lo));
}

Summary summarize(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("summary of an empty sample set");
  Summary s;
  s.min = *std::min_element(samples.begin(), samples.end());
  s.max = *std::max_element(samples.begin(), samples.end());
  s.median = quantile(samples, 0.5);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(samples.size());
  if (samples.size() > 1) {
    double sq = 0;
    for (double v : samples) sq += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(sq / double(samples.size() - 1));
  }
  return s;
}

nlohmann::json to_json(const Summary& s) {
  return {{"min", s.min}, {"median", s.median}, {"mean", s.mean}, {"max", s.max}, {"stdev", s.stdev}};
}

nlohmann::json summary_json_or_null(const std::vector<double>& samples) {
  return samples.empty() ? nlohmann::json() : to_json(summarize(samples));
}

WindowPair combine(const Window& a, const Window& b) {
  if (a.end_ns < a.start_ns || b.end_ns < b.start_ns) throw std::invalid_argument("window ends before it starts");
  WindowPair p;
  p.intersection_ns = std::max(0.0, std::min(a.end_ns, b.end_ns) - std::max(a.start_ns, b.start_ns));
  p.union_ns = a.length() + b.length() - p.intersection_ns;
  return p;
}

nlohmann::json tails_json(const std::vector<double>& values) {
  if (values.empty()) return nullptr;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  return {{"count", sorted.size()},      {"p50", quantile(sorted, 0.5)},     {"p90", quantile(sorted, 0.9)},
          {"p99", quantile(sorted, 0.99)}, {"p99_9", quantile(sorted, 0.999)}, {"max", sorted.back()}};
}

}  // namespace p2pbench
