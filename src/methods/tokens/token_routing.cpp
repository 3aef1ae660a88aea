#include "methods/tokens/token_routing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "plan/seeded_sample.hpp"

namespace p2pbench::tokens {

namespace {

// Expert popularity: uniform, or Zipf over a seeded order of the experts.
std::vector<double> popularity(const RouterSpec& spec) {
  std::vector<double> weight(spec.experts, 1.0);
  if (spec.skew == Skew::kUniform) return weight;
  std::vector<size_t> hottest(spec.experts);  // hottest[i]: the expert of the i-th popularity
  std::iota(hottest.begin(), hottest.end(), size_t{0});
  SplitMix64 g(derived_seed(spec.seed, 1));
  for (size_t i = hottest.size(); i > 1; --i) std::swap(hottest[i - 1], hottest[size_t(g.below(i))]);
  for (size_t i = 0; i < hottest.size(); ++i) weight[hottest[i]] = 1.0 / std::pow(double(i + 1), spec.zipf_exponent);
  return weight;
}

// `k` distinct experts drawn one after another in proportion to their weights.
std::vector<uint32_t> draw_experts(std::vector<double> weight, uint32_t k, SplitMix64& g) {
  std::vector<uint32_t> chosen;
  double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  for (uint32_t n = 0; n < k; ++n) {
    double x = g.unit() * total;
    uint32_t e = 0;
    while (e + 1 < weight.size() && (weight[e] == 0.0 || x >= weight[e])) x -= weight[e++];
    if (weight[e] == 0.0)  // rounding left x past the last weight: take the last expert still free
      while (weight[e] == 0.0) --e;
    chosen.push_back(e);
    total -= weight[e];
    weight[e] = 0.0;
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace

std::string RouterSpec::problem(int ranks) const {
  if (ranks < 1) return "at least one rank is needed";
  if (top_k < 1 || top_k > experts)
    return "top_k " + std::to_string(top_k) + " must be 1.." + std::to_string(experts) + " (the experts)";
  if (experts < uint32_t(ranks))
    return std::to_string(experts) + " experts cannot give each of " + std::to_string(ranks) + " ranks one";
  if (skew == Skew::kZipf && !(zipf_exponent > 0.0)) return "the Zipf exponent must be positive";
  return "";
}

int rank_of_expert(uint32_t expert, uint32_t experts, int ranks) {
  const uint32_t base = experts / uint32_t(ranks), larger = experts % uint32_t(ranks);
  const uint32_t in_larger = larger * (base + 1);
  if (expert < in_larger) return int(expert / (base + 1));
  return int(larger + (expert - in_larger) / base);
}

Routing route(const RouterSpec& spec, int ranks, int src) {
  Routing r;
  r.src = src;
  const std::vector<double> weight = popularity(spec);
  SplitMix64 g(derived_seed(spec.seed, 2 + uint64_t(src)));
  for (uint64_t t = 0; t < spec.tokens_per_rank; ++t) {
    r.experts.push_back(draw_experts(weight, spec.top_k, g));
    std::vector<int> to;
    for (uint32_t e : r.experts.back()) to.push_back(rank_of_expert(e, spec.experts, ranks));
    to.erase(std::unique(to.begin(), to.end()), to.end());  // experts ascending: ranks ascending
    r.destinations.push_back(std::move(to));
  }
  return r;
}

TokenLayout::TokenLayout(const std::vector<Routing>& by_source)
    : counts_(by_source.size(), std::vector<uint64_t>(by_source.size(), 0)) {
  for (const Routing& r : by_source)
    for (const std::vector<int>& to : r.destinations)
      for (int d : to) ++counts_.at(size_t(r.src)).at(size_t(d));
}

uint64_t TokenLayout::block_offset(int src, int dst) const {
  uint64_t offset = 0;
  for (int s = 0; s < src; ++s) offset += count(s, dst);
  return offset;
}

uint64_t TokenLayout::received(int dst) const { return block_offset(ranks(), dst); }

uint64_t TokenLayout::crossing() const {
  uint64_t n = 0;
  for (int s = 0; s < ranks(); ++s)
    for (int d = 0; d < ranks(); ++d)
      if (s != d) n += count(s, d);
  return n;
}

uint64_t TokenLayout::local() const {
  uint64_t n = 0;
  for (int s = 0; s < ranks(); ++s) n += count(s, s);
  return n;
}

std::vector<uint64_t> slots_in_block(const Routing& r, int dst) {
  std::vector<uint64_t> slots;
  uint64_t next = 0;
  for (const std::vector<int>& to : r.destinations)
    slots.push_back(std::binary_search(to.begin(), to.end(), dst) ? next++ : kNotSent);
  return slots;
}

}  // namespace p2pbench::tokens
