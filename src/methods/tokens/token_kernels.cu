#include "methods/tokens/token_kernels.hpp"

#include <cuda_bf16.h>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "kernels/pattern_device.cuh"
#include "kernels/ptx.cuh"

namespace p2pbench::tokens {
namespace {

constexpr int kThreads = 256;

__device__ unsigned long long differing_bytes(uint64_t diff) {
  unsigned long long n = 0;
  for (int b = 0; b < 8; ++b) n += ((diff >> (8 * b)) & 0xff) != 0;
  return n;
}

__device__ void record(kernels::PatternCheck* result, unsigned long long bad, unsigned long long first) {
  if (bad == 0) return;
  atomicAdd(&result->mismatches, bad);
  atomicMin(&result->first_bad_offset, first);
}

__global__ void fill_kernel(uint64_t* dst, uint64_t words, uint64_t seed) {
  for (uint64_t w = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += uint64_t(gridDim.x) * blockDim.x)
    dst[w] = kernels::token_word(seed, w);
}

__global__ void check_tokens_kernel(const uint64_t* data, uint64_t chunks, uint32_t hidden_bytes, const uint32_t* gather,
                                    uint64_t seed, kernels::PatternCheck* result) {
  const uint64_t per_token = hidden_bytes / 8, words = chunks * per_token;
  unsigned long long bad = 0, first = ~0ull;
  for (uint64_t w = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t k = w / per_token, source = gather ? gather[k] : k;
    const uint64_t diff = data[w] ^ kernels::token_word(seed, source * per_token + w % per_token);
    if (diff == 0) continue;
    bad += differing_bytes(diff);
    first = min(first, (unsigned long long)(8 * w));
  }
  record(result, bad, first);
}

// Four bf16 of one 8-byte word added into four f32 sums.
__device__ __forceinline__ void add_word(uint64_t word, float sum[4]) {
  for (int i = 0; i < 4; ++i)
    sum[i] += __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(word >> (16 * i))));
}

__device__ __forceinline__ uint64_t pack_word(const float sum[4]) {
  uint64_t word = 0;
  for (int i = 0; i < 4; ++i)
    word |= uint64_t(__bfloat16_as_ushort(__float2bfloat16_rn(sum[i]))) << (16 * i);
  return word;
}

// A warp per token; each lane sums kUnroll 16-byte pieces at a time (their loads issued
// together: the sum is bound by memory latency otherwise), the ranks in order, so the sum's
// rounding is the check's.
constexpr int kReduceThreads = 1024, kUnroll = 4;

__global__ void __launch_bounds__(kReduceThreads, 1) reduce_kernel(uint64_t* out, CombineInputs in) {
  const uint32_t lane = threadIdx.x & 31;
  const uint64_t warps = uint64_t(gridDim.x) * (blockDim.x / 32);
  const uint64_t pieces = in.hidden_bytes / 16;  // 16-byte pieces per token
  for (uint64_t t = (uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; t < in.tokens; t += warps) {
    for (uint64_t base = lane; base < pieces; base += 32 * kUnroll) {
      float sum[kUnroll][8] = {};
      for (int r = 0; r < in.ranks; ++r) {
        const uint32_t slot = in.slots[t * uint64_t(in.ranks) + r];
        if (slot == kNoSlot) continue;
        const auto* from = reinterpret_cast<const uint4*>(in.returned[r]) + uint64_t(slot) * pieces;
        uint4 v[kUnroll];
        for (int u = 0; u < kUnroll; ++u)
          if (base + 32 * u < pieces) v[u] = ptx::ld_nc_na_v4(from + base + 32 * u);
        for (int u = 0; u < kUnroll; ++u) {
          if (base + 32 * u >= pieces) break;
          add_word(uint64_t(v[u].x) | uint64_t(v[u].y) << 32, sum[u]);
          add_word(uint64_t(v[u].z) | uint64_t(v[u].w) << 32, sum[u] + 4);
        }
      }
      for (int u = 0; u < kUnroll; ++u) {
        const uint64_t piece = base + 32 * u;
        if (piece >= pieces) break;
        out[t * pieces * 2 + 2 * piece] = pack_word(sum[u]);
        out[t * pieces * 2 + 2 * piece + 1] = pack_word(sum[u] + 4);
      }
    }
  }
}

__global__ void check_combined_kernel(const uint64_t* out, CombineInputs in, kernels::PatternCheck* result) {
  const uint64_t per_token = in.hidden_bytes / 8, words = in.tokens * per_token;
  unsigned long long bad = 0, first = ~0ull;
  for (uint64_t w = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t t = w / per_token, within = w % per_token;
    float sum[4] = {0, 0, 0, 0};
    for (int r = 0; r < in.ranks; ++r) {
      const uint32_t slot = in.slots[t * uint64_t(in.ranks) + r];
      if (slot != kNoSlot) add_word(kernels::token_word(in.seed[r], uint64_t(slot) * per_token + within), sum);
    }
    const uint64_t diff = out[w] ^ pack_word(sum);
    if (diff == 0) continue;
    bad += differing_bytes(diff);
    first = min(first, (unsigned long long)(8 * w));
  }
  record(result, bad, first);
}

unsigned grid_for_words(uint64_t words) { return unsigned(std::min<uint64_t>(4096, (words + kThreads - 1) / kThreads + 1)); }

}  // namespace

void fill_tokens(void* dst, size_t bytes, uint64_t seed, cudaStream_t stream) {
  if (bytes < 8) return;
  fill_kernel<<<grid_for_words(bytes / 8), kThreads, 0, stream>>>(static_cast<uint64_t*>(dst), bytes / 8, seed);
  cuda_check_launch("the tokens' fill kernel");
}

void check_tokens(const void* data, uint64_t chunks, uint32_t hidden_bytes, const uint32_t* gather, uint64_t seed,
                  kernels::PatternCheck* result, cudaStream_t stream) {
  if (chunks == 0) return;
  check_tokens_kernel<<<grid_for_words(chunks * hidden_bytes / 8), kThreads, 0, stream>>>(
      static_cast<const uint64_t*>(data), chunks, hidden_bytes, gather, seed, result);
  cuda_check_launch("the dispatched tokens' check");
}

void combine_reduce(void* out, const CombineInputs& in, int blocks, cudaStream_t stream) {
  reduce_kernel<<<blocks, kReduceThreads, 0, stream>>>(static_cast<uint64_t*>(out), in);
  cuda_check_launch("the combine's reduction");
}

void check_combined(const void* out, const CombineInputs& in, kernels::PatternCheck* result, cudaStream_t stream) {
  check_combined_kernel<<<grid_for_words(in.tokens * in.hidden_bytes / 8), kThreads, 0, stream>>>(
      static_cast<const uint64_t*>(out), in, result);
  cuda_check_launch("the combined tokens' check");
}

}  // namespace p2pbench::tokens
