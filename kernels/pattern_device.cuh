// The verification pattern as device code, for kernels that check what they receive as it
// arrives (put_signal's receiver): the same function fill_pattern writes.
#pragma once

#include <cstdint>

namespace p2pbench::kernels {

// The pattern's 8-byte word `word` (byte offset 8 x word) of seed `seed`: the splitmix64
// finaliser, so neighbouring words and seeds give unrelated bytes.
__device__ __forceinline__ uint64_t pattern_word(uint64_t seed, uint64_t word) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + word;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The tokens methods' data: the pattern word's four 16-bit lanes as bf16 activations a model
// could hold (sign and 7 mantissa bits from the hash, magnitude 0.25 to 4: never NaN, infinite
// or subnormal), so the combine's bf16 sums are of realistic values.
__host__ __device__ __forceinline__ uint64_t bf16_lanes(uint64_t bits) {
  uint64_t out = 0;
  for (int lane = 0; lane < 4; ++lane) {
    const uint64_t h = (bits >> (16 * lane)) & 0xffff;
    const uint64_t exponent = 125 + ((h >> 7) & 3);
    out |= ((h & 0x8000) | (exponent << 7) | (h & 0x7f)) << (16 * lane);
  }
  return out;
}
__device__ __forceinline__ uint64_t token_word(uint64_t seed, uint64_t word) { return bf16_lanes(pattern_word(seed, word)); }

}  // namespace p2pbench::kernels
