// The example method's kernel: a grid-stride copy, 16 bytes per load and store where source and
// destination are 16-byte aligned, bytes otherwise. Its whole method is this folder
// (docs/architecture.md, "Adding a method").
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/cuda_check.hpp"

namespace example {

namespace {

__global__ void example_copy_kernel(const uint8_t* src, uint8_t* dst, size_t bytes) {
  const size_t thread = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const bool aligned = (reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) % 16 == 0;
  const size_t vectors = aligned ? bytes / 16 : 0;
  for (size_t i = thread; i < vectors; i += stride)
    reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  for (size_t i = vectors * 16 + thread; i < bytes; i += stride) dst[i] = src[i];
}

}  // namespace

void enqueue_example_copy(const void* src, void* dst, size_t bytes, int blocks, int threads, cudaStream_t stream) {
  example_copy_kernel<<<blocks, threads, 0, stream>>>(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), bytes);
  p2pbench::cuda_check_launch("the example copy kernel");
}

}  // namespace example
