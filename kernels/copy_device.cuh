// Device helpers shared by the LD/ST and TMA copy kernels: the grid-strided element copy and
// the any-alignment byte copy built on it, plus the host-side one-block-per-SM padding rule.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels::detail {

// Streaming load of one element of each width the copy uses.
__device__ __forceinline__ uint4 load_stream(const uint4* p) { return ptx::ld_nc_na_v4(p); }
__device__ __forceinline__ uint64_t load_stream(const uint64_t* p) { return ptx::ld_nc_na_u64(p); }
__device__ __forceinline__ uint32_t load_stream(const uint32_t* p) { return ptx::ld_nc_na_u32(p); }
__device__ __forceinline__ uint16_t load_stream(const uint16_t* p) { return ptx::ld_nc_na_u16(p); }
__device__ __forceinline__ uint8_t load_stream(const uint8_t* p) { return ptx::ld_nc_na_u8(p); }

// Copies n elements of T. Worker w of `workers` takes elements w, w + workers, ...: consecutive
// threads touch consecutive elements, so each warp access is coalesced. Each thread first
// issues `Unroll` independent loads, then their stores, so Unroll loads per thread are in
// flight at once (what hides the latency of a peer link).
template <typename T, int Unroll>
__device__ __forceinline__ void copy_elements(const T* __restrict__ src, T* __restrict__ dst, size_t n,
                                              size_t worker, size_t workers) {
  size_t i = worker;
  for (; i + (Unroll - 1) * workers < n; i += Unroll * workers) {
    T v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) v[u] = load_stream(src + i + u * workers);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) dst[i + u * workers] = v[u];
  }
  // Fewer than Unroll elements left for this thread.
  for (; i < n; i += workers) dst[i] = load_stream(src + i);
}

// Copies `bytes` bytes between addresses that agree modulo sizeof(T): bytes up to T
// alignment (head), whole T elements (body), the rest (tail). Head and tail are shorter than
// one element and go byte by byte to the first workers.
template <typename T, int Unroll>
__device__ __forceinline__ void copy_as(const uint8_t* src, uint8_t* dst, size_t bytes, size_t worker,
                                        size_t workers) {
  constexpr size_t kWidth = sizeof(T);
  size_t head = (kWidth - (reinterpret_cast<uintptr_t>(src) & (kWidth - 1))) & (kWidth - 1);
  if (head > bytes) head = bytes;
  const size_t body = (bytes - head) / kWidth;
  const size_t tail_begin = head + body * kWidth;
  for (size_t k = worker; k < head; k += workers) dst[k] = load_stream(src + k);
  for (size_t k = tail_begin + worker; k < bytes; k += workers) dst[k] = load_stream(src + k);
  copy_elements<T, Unroll>(reinterpret_cast<const T*>(src + head), reinterpret_cast<T*>(dst + head), body,
                           worker, workers);
}

// Copies any byte count at any alignment. The element width is the widest of 16/8/4/2/1
// bytes at which src and dst can both be aligned, i.e. (src - dst) % width == 0; with
// src and dst misaligned by different amounts that is narrower than 16 bytes, but every byte
// still moves. The branch is uniform across the grid.
template <int Unroll>
__device__ __forceinline__ void copy_any(const uint8_t* src, uint8_t* dst, size_t bytes, size_t worker,
                                         size_t workers) {
  const uintptr_t diff = reinterpret_cast<uintptr_t>(src) ^ reinterpret_cast<uintptr_t>(dst);
  if ((diff & 15) == 0) {
    copy_as<uint4, Unroll>(src, dst, bytes, worker, workers);
  } else if ((diff & 7) == 0) {
    copy_as<uint64_t, Unroll>(src, dst, bytes, worker, workers);
  } else if ((diff & 3) == 0) {
    copy_as<uint32_t, Unroll>(src, dst, bytes, worker, workers);
  } else if ((diff & 1) == 0) {
    copy_as<uint16_t, Unroll>(src, dst, bytes, worker, workers);
  } else {
    copy_elements<uint8_t, Unroll>(src, dst, bytes, worker, workers);
  }
}

// Dynamic shared memory that keeps a second block off an SM: just over half of the SM's
// shared memory. With one block per SM, a launch's `blocks` is the number of SMs it uses.
inline size_t one_block_per_sm_smem(int device) {
  int per_sm = 0;
  cuda_check(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
             "querying the shared memory per SM");
  return static_cast<size_t>(per_sm) / 2 + 1;
}

// The current device, for launchers whose API does not name one.
inline int current_device() {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "querying the current device");
  return device;
}

}  // namespace p2pbench::kernels::detail
