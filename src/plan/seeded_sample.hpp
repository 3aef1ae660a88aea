// Seeded choices for the plan (the sampled pattern's peers, the rounds' alone checks). The plan
// must be the same on every rank, every compiler and every standard library, so this uses its
// own generator (SplitMix64) and its own draws, not std::shuffle or std::uniform_int_distribution
// (whose results the standard leaves to the implementation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace p2pbench {

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
  // Uniform in [0, 1), from the top 53 bits (every double of that grid equally likely).
  double unit() { return double(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// `k` distinct indices of 0..n-1 (all of them when k >= n), chosen by `seed`, in ascending order.
std::vector<size_t> seeded_sample(size_t n, size_t k, uint64_t seed);

// A seed for one use of a config seed (e.g. one rank's peers): distinct streams from one seed.
uint64_t derived_seed(uint64_t seed, uint64_t stream);

}  // namespace p2pbench
