// Verification kernels: a seeded pattern, its poison (the bitwise complement, so that every
// byte is wrong until written), and an on-device check of every byte.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace p2pbench::kernels {

// The pattern's byte at offset `o` is a hash of (seed, o / 8), so a buffer region copied to
// the same offset elsewhere checks against the same function.
void fill_pattern(void* dst, size_t bytes, uint64_t seed, uint64_t offset, cudaStream_t stream);
void fill_poison(void* dst, size_t bytes, uint64_t seed, uint64_t offset, cudaStream_t stream);

struct PatternCheck {
  unsigned long long mismatches;        // bytes that differ
  unsigned long long first_bad_offset;  // lowest differing offset (relative to dst), or ~0ull
};

// Accumulates into *result (device or mapped memory; initialise with {0, ~0ull}).
void check_pattern(const void* data, size_t bytes, uint64_t seed, uint64_t offset, PatternCheck* result,
                   cudaStream_t stream);

}  // namespace p2pbench::kernels
