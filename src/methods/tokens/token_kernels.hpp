// The tokens methods' own kernels: their data (bf16 activations, kernels/pattern_device.cuh
// token_word), the check of dispatched tokens, and the combine's reduction and its check.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/pattern_kernels.hpp"

namespace p2pbench::tokens {

constexpr int kMaxTokenRanks = 16;  // ranks a tokens case may route over
constexpr uint32_t kNoSlot = UINT32_MAX;

// Fills `bytes` with token_word data of `seed` (bytes a multiple of 8).
void fill_tokens(void* dst, size_t bytes, uint64_t seed, cudaStream_t stream);

// Checks every byte of `chunks` received tokens of `hidden_bytes`: token k must be the source's
// token gather[k] (null: token k) of seed `seed`. Accumulates into *result.
void check_tokens(const void* data, uint64_t chunks, uint32_t hidden_bytes, const uint32_t* gather, uint64_t seed,
                  kernels::PatternCheck* result, cudaStream_t stream);

// What the combine adds on one rank: for each rank r that returns tokens, where they landed and
// (for the check) the seed of r's data. slots[t x ranks + r]: the row of token t among r's
// returned tokens, or kNoSlot.
struct CombineInputs {
  const uint8_t* returned[kMaxTokenRanks] = {};
  uint64_t seed[kMaxTokenRanks] = {};
  const uint32_t* slots = nullptr;  // device, tokens x ranks
  int ranks = 0;
  uint64_t tokens = 0;
  uint32_t hidden_bytes = 0;
};

// out[t] = the bf16 sum, in f32 and rank order, of every returned copy of token t (0 where none):
// a warp per token over `blocks` blocks.
void combine_reduce(void* out, const CombineInputs& in, int blocks, cudaStream_t stream);
// Every byte of out against the same sum computed from the ranks' seeds.
void check_combined(const void* out, const CombineInputs& in, kernels::PatternCheck* result, cudaStream_t stream);

}  // namespace p2pbench::tokens
