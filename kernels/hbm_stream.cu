// The HBM stream workload: a local HBM -> HBM copy by SM loads and stores, in every
// shape HbmStreamShape names (kernels/workload_kernels.hpp), so that the shape can be chosen by
// measurement. One kernel template per (layout, hints, unroll, blocks per SM); every 16-byte
// access of the stream goes through kernels/ptx.cuh (the L2 settle before it uses plain stores,
// which need no hint).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/text_format.hpp"
#include "kernels/ptx.cuh"
#include "kernels/workload_kernels.hpp"

namespace p2pbench::kernels {

namespace {

constexpr int kStreamThreads = 1024;
constexpr uint32_t kWarp = 32;
// Spans stay far below 2^32 vectors, so 32-bit offsets within a span cannot wrap.
constexpr size_t kMaxChunkBytes = size_t(1) << 30;

// The loads and stores of one hint set (HbmHints).
template <HbmHints Hints>
struct StreamAccess;

template <>
struct StreamAccess<HbmHints::none> {
  __device__ uint4 load(const uint4* p) const { return ptx::ld_nc_na_v4(p); }
  __device__ void store(uint4* p, uint4 v) const { ptx::st_v4(p, v); }
};

template <>
struct StreamAccess<HbmHints::streaming> {
  __device__ uint4 load(const uint4* p) const { return ptx::ld_cs_nc_v4(p); }
  __device__ void store(uint4* p, uint4 v) const { ptx::st_cs_v4(p, v); }
};

template <>
struct StreamAccess<HbmHints::evict_first> {
  __device__ StreamAccess() : policy(ptx::createpolicy_l2_evict_first()) {}  // once per thread
  uint64_t policy;
  __device__ uint4 load(const uint4* p) const { return ptx::ld_nc_na_policy_v4(p, policy); }
  __device__ void store(uint4* p, uint4 v) const { ptx::st_na_policy_v4(p, v, policy); }
};

template <>
struct StreamAccess<HbmHints::prefetch> {
  __device__ uint4 load(const uint4* p) const { return ptx::ld_nc_na_l2_256b_v4(p); }
  __device__ void store(uint4* p, uint4 v) const { ptx::st_cs_v4(p, v); }
};

// Copies n 16-byte vectors: worker w of `workers` takes vectors w, w + workers, ..., so every
// warp instruction touches 512 consecutive bytes (two adjacent vectors per lane instead would
// touch every 32-byte sector at half use per instruction). Each step issues Unroll loads before their
// stores (Unroll loads in flight per thread). Offsets are 32-bit (a span is at most 1 GiB):
// fewer registers, which decides whether 2 blocks of 1024 threads fit on an SM.
template <int Unroll, class Access>
__device__ __forceinline__ void copy_span(const uint4* __restrict__ src, uint4* __restrict__ dst, uint32_t n,
                                          uint32_t worker, uint32_t workers, const Access& access) {
  const uint32_t step = workers * Unroll;
  uint32_t base = 0;
#pragma unroll 1  // exactly Unroll loads in flight, also where `workers` is a constant (warp_chunks)
  for (; n - base >= step; base += step) {
    uint4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) v[u] = access.load(src + base + u * workers + worker);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) access.store(dst + base + u * workers + worker, v[u]);
  }
#pragma unroll 1
  for (uint32_t i = base + worker; i < n; i += workers) access.store(dst + i, access.load(src + i));
}

__device__ __forceinline__ uint32_t span_of(size_t start, size_t vectors, uint32_t chunk_vectors) {
  return uint32_t(vectors - start < chunk_vectors ? vectors - start : chunk_vectors);
}

// block_chunks: block b's first chunk is chunk b; later ones come from the counter, offset by
// the grid size. Thread 0 claims the next chunk when this one starts and publishes it at the
// barrier that ends it, so the claim's round trip to L2 hides behind the copy. Two slots: a
// slot is written one chunk after every thread last read it.
template <int Unroll, class Access>
__device__ __forceinline__ void stream_block_chunks(const uint4* src, uint4* dst, size_t vectors,
                                                    unsigned long long* next_chunk, uint32_t chunk_vectors,
                                                    const Access& access) {
  __shared__ unsigned long long claimed[2];
  unsigned long long chunk = blockIdx.x;
  for (int slot = 0;; slot ^= 1) {
    const size_t start = size_t(chunk) * chunk_vectors;
    if (start >= vectors) return;  // the same chunk for every thread: the block leaves together
    unsigned long long next = 0;
    if (threadIdx.x == 0) next = gridDim.x + atomicAdd(next_chunk, 1ull);
    copy_span<Unroll>(src + start, dst + start, span_of(start, vectors, chunk_vectors), threadIdx.x, blockDim.x,
                      access);
    if (threadIdx.x == 0) claimed[slot] = next;
    __syncthreads();
    chunk = claimed[slot];
  }
}

// warp_chunks: as block_chunks, per warp: lane 0 claims, a shuffle shares the claim.
template <int Unroll, class Access>
__device__ __forceinline__ void stream_warp_chunks(const uint4* src, uint4* dst, size_t vectors,
                                                   unsigned long long* next_chunk, uint32_t chunk_vectors,
                                                   const Access& access) {
  const uint32_t lane = threadIdx.x % kWarp;
  const uint32_t warps = gridDim.x * (blockDim.x / kWarp);
  unsigned long long chunk = (blockIdx.x * blockDim.x + threadIdx.x) / kWarp;
  while (true) {
    const size_t start = size_t(chunk) * chunk_vectors;
    if (start >= vectors) return;  // the same chunk for every lane
    unsigned long long next = 0;
    if (lane == 0) next = warps + atomicAdd(next_chunk, 1ull);
    copy_span<Unroll>(src + start, dst + start, span_of(start, vectors, chunk_vectors), lane, kWarp, access);
    chunk = __shfl_sync(0xffffffffu, next, 0);
  }
}

// grid_stride: the whole grid copies one step (workers x Unroll vectors) per round.
template <int Unroll, class Access>
__device__ __forceinline__ void stream_grid_stride(const uint4* src, uint4* dst, size_t vectors, const Access& access) {
  const uint32_t workers = gridDim.x * blockDim.x;
  const uint32_t worker = blockIdx.x * blockDim.x + threadIdx.x;
  const size_t round = size_t(workers) * Unroll;
  for (size_t start = 0; start < vectors; start += round)
    copy_span<Unroll>(src + start, dst + start, uint32_t(vectors - start < round ? vectors - start : round), worker, workers,
                      access);
}

// MinBlocks: the resident blocks per SM the compiler must allow (2: at most 32 registers).
template <HbmLayout Layout, HbmHints Hints, int Unroll, int MinBlocks>
__global__ void __launch_bounds__(kStreamThreads, MinBlocks)
    hbm_stream_kernel(const uint4* src, uint4* dst, size_t vectors, unsigned long long* next_chunk, uint32_t chunk_vectors) {
  const StreamAccess<Hints> access{};
  if constexpr (Layout == HbmLayout::block_chunks)
    stream_block_chunks<Unroll>(src, dst, vectors, next_chunk, chunk_vectors, access);
  else if constexpr (Layout == HbmLayout::warp_chunks)
    stream_warp_chunks<Unroll>(src, dst, vectors, next_chunk, chunk_vectors, access);
  else
    stream_grid_stride<Unroll>(src, dst, vectors, access);
}

// The L2 settle (HbmStreamShape::l2_settle): plain stores of zeros over the destination's head,
// which the stream then overwrites first.
__global__ void __launch_bounds__(kStreamThreads) l2_settle_kernel(uint4* dst, size_t vectors) {
  const size_t step = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += step) dst[i] = uint4{0, 0, 0, 0};
}

using StreamKernel = void (*)(const uint4*, uint4*, size_t, unsigned long long*, uint32_t);

// The kernel of a shape, one template parameter at a time (the shape is validated first).
template <HbmLayout Layout, HbmHints Hints, int Unroll>
StreamKernel kernel_by_blocks(int blocks_per_sm) {
  return blocks_per_sm == 2 ? &hbm_stream_kernel<Layout, Hints, Unroll, 2> : &hbm_stream_kernel<Layout, Hints, Unroll, 1>;
}

template <HbmLayout Layout, HbmHints Hints>
StreamKernel kernel_by_unroll(const HbmStreamShape& s) {
  if (s.unroll == 2) return kernel_by_blocks<Layout, Hints, 2>(s.blocks_per_sm);
  if (s.unroll == 4) return kernel_by_blocks<Layout, Hints, 4>(s.blocks_per_sm);
  return kernel_by_blocks<Layout, Hints, 8>(s.blocks_per_sm);
}

template <HbmLayout Layout>
StreamKernel kernel_by_hints(const HbmStreamShape& s) {
  switch (s.hints) {
    case HbmHints::none: return kernel_by_unroll<Layout, HbmHints::none>(s);
    case HbmHints::streaming: return kernel_by_unroll<Layout, HbmHints::streaming>(s);
    case HbmHints::evict_first: return kernel_by_unroll<Layout, HbmHints::evict_first>(s);
    case HbmHints::prefetch: return kernel_by_unroll<Layout, HbmHints::prefetch>(s);
  }
  return nullptr;
}

void validate(const HbmStreamShape& s) {
  const std::string shape = describe(s);
  if (s.unroll != 2 && s.unroll != 4 && s.unroll != 8)
    throw InputError("HBM stream shape unroll", std::to_string(s.unroll), "must be 2, 4 or 8 (" + shape + ")");
  if (s.blocks_per_sm != 1 && s.blocks_per_sm != 2)
    throw InputError("HBM stream shape blocks_per_sm", std::to_string(s.blocks_per_sm), "must be 1 or 2 (" + shape + ")");
  if (!(s.l2_settle >= 0 && s.l2_settle <= 16))
    throw InputError("HBM stream shape l2_settle", std::to_string(s.l2_settle), "must be 0 to 16 L2 sizes (" + shape + ")");
  if (s.chunk_bytes == 0 || s.chunk_bytes % 16 != 0 || s.chunk_bytes > kMaxChunkBytes)
    throw InputError("HBM stream shape chunk_bytes", std::to_string(s.chunk_bytes),
                     "must be a non-zero multiple of 16 of at most 1 GiB (" + shape + ")");
  hbm_hints_name(s.hints);    // throws for a value outside the enum
  hbm_layout_name(s.layout);
}

// Writes `l2_sizes` L2 sizes (at most `vectors`) of the destination's head: see
// HbmStreamShape::l2_settle.
void settle_l2(uint4* dst, size_t vectors, int blocks, cudaStream_t stream, double l2_sizes) {
  if (l2_sizes <= 0) return;
  int device = 0, l2_bytes = 0;
  cuda_check(cudaGetDevice(&device), "querying the device of the HBM stream");
  cuda_check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), "querying the L2 size");
  const auto head = std::min(vectors, size_t(l2_sizes * double(l2_bytes)) / 16);
  l2_settle_kernel<<<blocks, kStreamThreads, 0, stream>>>(dst, head);
  cuda_check_launch("the HBM stream's L2 settle kernel");
}

StreamKernel kernel_for(const HbmStreamShape& s) {
  validate(s);
  switch (s.layout) {
    case HbmLayout::block_chunks: return kernel_by_hints<HbmLayout::block_chunks>(s);
    case HbmLayout::warp_chunks: return kernel_by_hints<HbmLayout::warp_chunks>(s);
    case HbmLayout::grid_stride: return kernel_by_hints<HbmLayout::grid_stride>(s);
  }
  return nullptr;
}

constexpr const char* kHintsNames[] = {"none", "streaming", "evict_first", "prefetch"};
constexpr const char* kLayoutNames[] = {"block_chunks", "warp_chunks", "grid_stride"};

}  // namespace

const char* hbm_hints_name(HbmHints hints) {
  const auto i = static_cast<size_t>(hints);
  if (i >= std::size(kHintsNames)) throw InputError("HBM stream hints", std::to_string(i), "is not a hint set");
  return kHintsNames[i];
}

const char* hbm_layout_name(HbmLayout layout) {
  const auto i = static_cast<size_t>(layout);
  if (i >= std::size(kLayoutNames)) throw InputError("HBM stream layout", std::to_string(i), "is not a layout");
  return kLayoutNames[i];
}

HbmHints parse_hbm_hints(const std::string& name, const std::string& key) {
  for (size_t i = 0; i < std::size(kHintsNames); ++i)
    if (name == kHintsNames[i]) return static_cast<HbmHints>(i);
  throw InputError(key, name, "must be none, streaming, evict_first or prefetch");
}

HbmLayout parse_hbm_layout(const std::string& name, const std::string& key) {
  for (size_t i = 0; i < std::size(kLayoutNames); ++i)
    if (name == kLayoutNames[i]) return static_cast<HbmLayout>(i);
  throw InputError(key, name, "must be block_chunks, warp_chunks or grid_stride");
}

std::string describe(const HbmStreamShape& s) {
  const auto i = static_cast<size_t>(s.hints), l = static_cast<size_t>(s.layout);
  return std::string("layout ") + (l < std::size(kLayoutNames) ? kLayoutNames[l] : "?") + " hints " +
         (i < std::size(kHintsNames) ? kHintsNames[i] : "?") + " unroll " + std::to_string(s.unroll) + " chunk " +
         std::to_string(s.chunk_bytes >> 10) + " KiB blocks/SM " + std::to_string(s.blocks_per_sm) +
         (s.l2_settle == HbmStreamShape{}.l2_settle ? "" : text_format(" L2 settle %g", s.l2_settle));
}

HbmStreamKernelInfo hbm_stream_kernel_info(const HbmStreamShape& shape) {
  const StreamKernel kernel = kernel_for(shape);
  cudaFuncAttributes attributes{};
  cuda_check(cudaFuncGetAttributes(&attributes, kernel), "querying the HBM stream kernel's registers");
  int resident = 0;
  cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kStreamThreads, 0),
             "querying the HBM stream kernel's resident blocks per SM");
  return {attributes.numRegs, attributes.localSizeBytes, resident};
}

int hbm_stream_blocks(int device, const HbmStreamShape& shape, int sms) {
  const HbmStreamKernelInfo info = hbm_stream_kernel_info(shape);
  if (info.resident_blocks_per_sm < shape.blocks_per_sm)
    throw InputError("HBM stream shape blocks_per_sm", std::to_string(shape.blocks_per_sm),
                     "only " + std::to_string(info.resident_blocks_per_sm) + " blocks of 1024 threads fit on an SM with " +
                         std::to_string(info.registers) + " registers per thread (" + describe(shape) + ")");
  if (sms <= 0)
    cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "querying the SM count");
  return shape.blocks_per_sm * sms;
}

void hbm_stream(const void* src, void* dst, size_t bytes, int blocks, unsigned long long* next_chunk, cudaStream_t stream,
                const HbmStreamShape& shape) {
  const StreamKernel kernel = kernel_for(shape);
  if (bytes % 16 != 0 || reinterpret_cast<uintptr_t>(src) % 16 != 0 || reinterpret_cast<uintptr_t>(dst) % 16 != 0)
    throw InputError("HBM stream bytes", std::to_string(bytes), "the byte count and both addresses must be multiples of 16");
  settle_l2(static_cast<uint4*>(dst), bytes / 16, blocks, stream, shape.l2_settle);
  if (shape.layout != HbmLayout::grid_stride)
    cuda_check(cudaMemsetAsync(next_chunk, 0, sizeof *next_chunk, stream), "resetting the HBM stream's chunk counter");
  kernel<<<blocks, kStreamThreads, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), bytes / 16,
                                                next_chunk, uint32_t(shape.chunk_bytes / 16));
  cuda_check_launch("the HBM stream kernel");
}

}  // namespace p2pbench::kernels
