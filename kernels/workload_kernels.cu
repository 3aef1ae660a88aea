#include "kernels/workload_kernels.hpp"

#include <cuda_bf16.h>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "kernels/copy_device.cuh"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kStreamThreads = 1024;

int grid_for(size_t items) { return int(std::clamp<size_t>((items + kThreads - 1) / kThreads, 1, 65535)); }

__global__ void fill_bf16_kernel(__nv_bfloat16* dst, size_t count, uint64_t seed) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = __float2bfloat16(operand_value(seed, i));
}

__global__ void checksum_kernel(const uint64_t* words, size_t n, unsigned long long* result) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  unsigned long long sum = 0;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) sum += words[i] * (2 * i + 1);
  atomicAdd(result, sum);
}

template <int Unroll>
__global__ void __launch_bounds__(kStreamThreads, 1)
    hbm_stream_kernel(const uint8_t* src, uint8_t* dst, size_t bytes, unsigned long long* next_chunk, size_t chunk_bytes) {
  __shared__ unsigned long long chunk;
  while (true) {
    if (threadIdx.x == 0) chunk = atomicAdd(next_chunk, 1ull);
    __syncthreads();
    const size_t start = size_t(chunk) * chunk_bytes;
    __syncthreads();  // every thread has read `chunk` before thread 0 overwrites it
    if (start >= bytes) return;
    const size_t n = bytes - start < chunk_bytes ? bytes - start : chunk_bytes;
    detail::copy_any<Unroll>(src + start, dst + start, n, threadIdx.x, blockDim.x);
  }
}

__global__ void smid_probe_kernel(unsigned* smids, uint64_t hold_ns) {
  const uint64_t t0 = ptx::globaltimer_ns();
  if (threadIdx.x == 0) smids[blockIdx.x] = ptx::smid();
  while (ptx::globaltimer_ns() - t0 < hold_ns) {
  }
}

}  // namespace

void fill_bf16_operand(void* dst, size_t count, uint64_t seed, cudaStream_t stream) {
  fill_bf16_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(dst), count, seed);
  cuda_check_launch("the bf16 operand fill kernel");
}

void checksum_words(const void* data, size_t bytes, unsigned long long* result, cudaStream_t stream) {
  const size_t n = bytes / 8;
  checksum_kernel<<<grid_for(n / 16 + 1), kThreads, 0, stream>>>(static_cast<const uint64_t*>(data), n, result);
  cuda_check_launch("the checksum kernel");
}

HbmStreamShape default_hbm_stream_shape() {
  return {P2PBENCH_HBM_UNROLL, size_t(P2PBENCH_HBM_CHUNK_KIB) << 10, P2PBENCH_HBM_BLOCKS_PER_SM};
}

int hbm_stream_blocks(int device, const HbmStreamShape& shape) {
  int sms = 0;
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "querying the SM count");
  return shape.blocks_per_sm * sms;  // two blocks of 1024 threads fill an SM's 2048 thread slots
}

void hbm_stream(const void* src, void* dst, size_t bytes, int blocks, unsigned long long* next_chunk, cudaStream_t stream,
                const HbmStreamShape& shape) {
  if (shape.chunk_bytes == 0 || (shape.unroll != 4 && shape.unroll != 8))
    throw InputError("HBM stream shape: unroll must be 4 or 8 and the chunk non-empty");
  cuda_check(cudaMemsetAsync(next_chunk, 0, sizeof *next_chunk, stream), "resetting the HBM stream's chunk counter");
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  if (shape.unroll == 8) hbm_stream_kernel<8><<<blocks, kStreamThreads, 0, stream>>>(s, d, bytes, next_chunk, shape.chunk_bytes);
  else hbm_stream_kernel<4><<<blocks, kStreamThreads, 0, stream>>>(s, d, bytes, next_chunk, shape.chunk_bytes);
  cuda_check_launch("the HBM stream kernel");
}

void record_block_smids(unsigned* smids, int blocks, uint64_t hold_ns, cudaStream_t stream) {
  smid_probe_kernel<<<blocks, 32, 0, stream>>>(smids, hold_ns);
  cuda_check_launch("the SM probe kernel");
}

}  // namespace p2pbench::kernels
