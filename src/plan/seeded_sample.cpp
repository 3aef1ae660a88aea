#include "plan/seeded_sample.hpp"

#include <algorithm>
#include <numeric>

namespace p2pbench {

uint64_t derived_seed(uint64_t seed, uint64_t stream) {
  SplitMix64 g(seed ^ (stream * 0xD1B54A32D192ED03ull));
  return g.next();
}

std::vector<size_t> seeded_sample(size_t n, size_t k, uint64_t seed) {
  std::vector<size_t> items(n);
  std::iota(items.begin(), items.end(), size_t{0});
  k = std::min(k, n);
  SplitMix64 g(seed);
  // The first k steps of a Fisher-Yates shuffle draw k distinct items uniformly.
  for (size_t i = 0; i < k; ++i) std::swap(items[i], items[i + size_t(g.below(n - i))]);
  items.resize(k);
  std::sort(items.begin(), items.end());
  return items;
}

}  // namespace p2pbench
