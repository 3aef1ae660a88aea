#include "kernels/pattern_kernels.hpp"

#include <algorithm>

#include "common/cuda_check.hpp"
#include "kernels/pattern_device.cuh"

namespace p2pbench::kernels {

namespace {

__device__ __forceinline__ uint8_t pattern_byte(uint64_t seed, uint64_t o) {
  return uint8_t(pattern_word(seed, o >> 3) >> (8 * (o & 7)));
}

// Whole aligned 8-byte words where the buffer allows, single bytes elsewhere.
template <bool kPoison>
__global__ void fill_kernel(uint8_t* dst, size_t bytes, uint64_t seed, uint64_t offset) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t tid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool words = (reinterpret_cast<uintptr_t>(dst) % 8 == 0) && (offset % 8 == 0);
  const uint64_t n_words = words ? bytes / 8 : 0;
  auto* dst64 = reinterpret_cast<uint64_t*>(dst);
  for (uint64_t w = tid; w < n_words; w += stride) {
    const uint64_t v = pattern_word(seed, (offset >> 3) + w);
    dst64[w] = kPoison ? ~v : v;
  }
  for (uint64_t b = n_words * 8 + tid; b < bytes; b += stride) {
    const uint8_t v = pattern_byte(seed, offset + b);
    dst[b] = kPoison ? uint8_t(~v) : v;
  }
}

__device__ void record_mismatch(PatternCheck* result, unsigned long long count, unsigned long long first) {
  atomicAdd(&result->mismatches, count);
  atomicMin(&result->first_bad_offset, first);
}

__global__ void check_kernel(const uint8_t* data, size_t bytes, uint64_t seed, uint64_t offset, PatternCheck* result) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t tid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool words = (reinterpret_cast<uintptr_t>(data) % 8 == 0) && (offset % 8 == 0);
  const uint64_t n_words = words ? bytes / 8 : 0;
  const auto* data64 = reinterpret_cast<const uint64_t*>(data);
  unsigned long long bad = 0, first = ~0ull;
  for (uint64_t w = tid; w < n_words; w += stride) {
    const uint64_t diff = data64[w] ^ pattern_word(seed, (offset >> 3) + w);
    if (diff != 0) {
      for (int b = 0; b < 8; ++b) {
        if ((diff >> (8 * b)) & 0xff) {
          ++bad;
          first = min(first, (unsigned long long)(w * 8 + b));
        }
      }
    }
  }
  for (uint64_t b = n_words * 8 + tid; b < bytes; b += stride) {
    if (data[b] != pattern_byte(seed, offset + b)) {
      ++bad;
      first = min(first, (unsigned long long)b);
    }
  }
  if (bad) record_mismatch(result, bad, first);
}

dim3 grid_for(size_t bytes) {
  const size_t words = bytes / 8 + 1;
  return dim3(unsigned(std::min<size_t>(4096, (words + 255) / 256)));
}

}  // namespace

void fill_pattern(void* dst, size_t bytes, uint64_t seed, uint64_t offset, cudaStream_t stream) {
  if (bytes == 0) return;
  fill_kernel<false><<<grid_for(bytes), 256, 0, stream>>>(static_cast<uint8_t*>(dst), bytes, seed, offset);
  cuda_check_launch("the pattern fill kernel");
}

void fill_poison(void* dst, size_t bytes, uint64_t seed, uint64_t offset, cudaStream_t stream) {
  if (bytes == 0) return;
  fill_kernel<true><<<grid_for(bytes), 256, 0, stream>>>(static_cast<uint8_t*>(dst), bytes, seed, offset);
  cuda_check_launch("the poison fill kernel");
}

void check_pattern(const void* data, size_t bytes, uint64_t seed, uint64_t offset, PatternCheck* result,
                   cudaStream_t stream) {
  if (bytes == 0) return;
  check_kernel<<<grid_for(bytes), 256, 0, stream>>>(static_cast<const uint8_t*>(data), bytes, seed, offset, result);
  cuda_check_launch("the verification kernel");
}

}  // namespace p2pbench::kernels
