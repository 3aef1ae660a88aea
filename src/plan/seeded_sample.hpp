// Seeded choices for the plan (the sampled pattern's peers, the rounds' alone checks). The plan
// must be the same on every rank, every compiler and every standard library, so this uses its
// own generator (SplitMix64) and its own draws, not std::shuffle or std::uniform_int_distribution
// (whose results the standard leaves to the implementation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace p2pbench {

// `k` distinct indices of 0..n-1 (all of them when k >= n), chosen by `seed`, in ascending order.
std::vector<size_t> seeded_sample(size_t n, size_t k, uint64_t seed);

// A seed for one use of a config seed (e.g. one rank's peers): distinct streams from one seed.
uint64_t derived_seed(uint64_t seed, uint64_t stream);

}  // namespace p2pbench
