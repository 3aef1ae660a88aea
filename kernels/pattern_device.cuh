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

}  // namespace p2pbench::kernels
