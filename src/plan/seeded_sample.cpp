#include "plan/seeded_sample.hpp"

#include <algorithm>
#include <numeric>

namespace p2pbench {

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a full-period 64-bit generator with good mixing.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in 0..bound-1 (bound >= 1), by rejection: no modulo bias.
  uint64_t below(uint64_t bound) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x = next();
    while (x >= limit) x = next();
    return x % bound;
  }

 private:
  uint64_t state_;
};

}  // namespace

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
