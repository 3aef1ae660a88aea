// Pointer-chase read latency: a chain of dependent loads through (a peer's) memory, timed in
// the kernel. Declared in latency_kernels.hpp beside the ping-pong.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/latency_kernels.hpp"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {
namespace {

// base 0: offsets; else absolute addresses base + offset.
__global__ void build_chase_kernel(uint8_t* buf, uint64_t n, uint64_t stride, uint64_t base) {
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    *reinterpret_cast<uint64_t*>(buf + i * stride) = base + ((i + 1) % n) * stride;
}

template <ChaseLoad kLoad>
__device__ __forceinline__ uint64_t chase_load(const uint8_t* p) {
  return kLoad == ChaseLoad::kStrong ? ptx::ld_relaxed_sys_u64(p) : ptx::ld_weak_u64(p);
}

// One thread, one dependent chain: every load's address comes from the previous load. Only
// block `chaser_block` chases; the grid's other blocks (ChaseLaunch) return at once.
template <ChaseLoad kLoad>
__global__ void pointer_chase_kernel(const uint8_t* buf, uint64_t loads, ChaseResult* result, unsigned chaser_block) {
  if (blockIdx.x != chaser_block) return;
  uint64_t off = 0;
  const long long c0 = clock64();
  const uint64_t t0 = ptx::globaltimer_ns();
  if constexpr (kLoad == ChaseLoad::kAbsolute) {
    const uint8_t* p = buf;
    for (uint64_t i = 0; i < loads; ++i) p = reinterpret_cast<const uint8_t*>(ptx::ld_weak_u64(p));
    off = static_cast<uint64_t>(p - buf);
  } else if constexpr (kLoad == ChaseLoad::kGeneric) {
    const uint8_t* p = buf;
    for (uint64_t i = 0; i < loads; ++i) p = reinterpret_cast<const uint8_t*>(ptx::ld_generic_u64(p));
    off = static_cast<uint64_t>(p - buf);
  } else {
    for (uint64_t i = 0; i < loads; ++i) off = chase_load<kLoad>(buf + off);
  }
  // Storing the last offset first makes the closing stamps wait for the last load.
  result->final_offset = off;
  const uint64_t t1 = ptx::globaltimer_ns();
  const long long c1 = clock64();
  result->elapsed_ns = t1 - t0;
  result->elapsed_cycles = static_cast<unsigned long long>(c1 - c0);
  result->loads = loads;
  result->smid = ptx::smid();
  result->chaser_block = blockIdx.x;
}

}  // namespace

std::optional<std::string> chase_unsupported_reason(size_t bytes, size_t stride) {
  if (stride < 8 || stride % 8 != 0)
    return "pointer-chase stride must be a positive multiple of 8 bytes (got " + std::to_string(stride) + ")";
  if (bytes < stride)
    return "pointer-chase buffer (" + std::to_string(bytes) + " bytes) is smaller than one stride (" +
           std::to_string(stride) + ")";
  return std::nullopt;
}

void build_chase_chain(void* buf, size_t bytes, size_t stride, cudaStream_t stream, const void* pointer_base) {
  if (auto why = chase_unsupported_reason(bytes, stride)) throw InputError(*why);
  if (reinterpret_cast<uintptr_t>(buf) % 8 != 0) throw InputError("pointer-chase buffer must be 8-byte aligned");
  const uint64_t n = bytes / stride;
  const auto blocks = static_cast<unsigned>(std::min<uint64_t>(1024, (n + 255) / 256));
  build_chase_kernel<<<blocks, 256, 0, stream>>>(static_cast<uint8_t*>(buf), n, stride,
                                                 reinterpret_cast<uint64_t>(pointer_base));
  cuda_check_launch("the pointer-chase chain builder");
}

void enqueue_pointer_chase(const void* buf, size_t bytes, size_t stride, uint64_t loads, ChaseResult* result,
                           cudaStream_t stream, ChaseLoad load, ChaseLaunch launch) {
  if (auto why = chase_unsupported_reason(bytes, stride)) throw InputError(*why);
  if (launch.grid_blocks == 0 || launch.chaser_block >= launch.grid_blocks)
    throw InputError("pointer-chase launch: chaser block " + std::to_string(launch.chaser_block) +
                     " is not in a grid of " + std::to_string(launch.grid_blocks) + " blocks");
  const auto* b = static_cast<const uint8_t*>(buf);
  const unsigned g = launch.grid_blocks;
  const unsigned k = launch.chaser_block;
  switch (load) {
    case ChaseLoad::kStrong: pointer_chase_kernel<ChaseLoad::kStrong><<<g, 1, 0, stream>>>(b, loads, result, k); break;
    case ChaseLoad::kWeak: pointer_chase_kernel<ChaseLoad::kWeak><<<g, 1, 0, stream>>>(b, loads, result, k); break;
    case ChaseLoad::kAbsolute: pointer_chase_kernel<ChaseLoad::kAbsolute><<<g, 1, 0, stream>>>(b, loads, result, k); break;
    case ChaseLoad::kGeneric: pointer_chase_kernel<ChaseLoad::kGeneric><<<g, 1, 0, stream>>>(b, loads, result, k); break;
  }
  cuda_check_launch("the pointer-chase kernel");
}

uint64_t expected_chase_end(size_t bytes, size_t stride, uint64_t loads) {
  const uint64_t n = bytes / stride;
  return n == 0 ? 0 : (loads % n) * stride;
}

}  // namespace p2pbench::kernels
