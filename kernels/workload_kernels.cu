#include "kernels/workload_kernels.hpp"

#include <algorithm>

#include <cub/block/block_reduce.cuh>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/event_wait.hpp"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {

namespace {

constexpr int kThreads = 256;
// Enough resident blocks to fill an H200's 132 SMs eight times over; more would only add atomics.
constexpr int kChecksumBlocks = 1056;

int grid_for(size_t items) { return int(std::clamp<size_t>((items + kThreads - 1) / kThreads, 1, 65535)); }

__global__ void fill_bf16_kernel(uint16_t* dst, size_t count, OperandKind kind, uint64_t seed) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = bf16_bits(operand_value(kind, seed, i));
}

// Each block sums its words and adds one partial: an atomic a thread into the mapped result,
// across PCIe, made the checksum of a 1 GiB D take seconds.
__global__ void checksum_kernel(const uint64_t* words, size_t n, unsigned long long* result) {
  using BlockSum = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename BlockSum::TempStorage scratch;
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  unsigned long long sum = 0;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) sum += words[i] * (2 * i + 1);
  const unsigned long long block_sum = BlockSum(scratch).Sum(sum);
  if (threadIdx.x == 0) atomicAdd(result, block_sum);
}

__global__ void smid_probe_kernel(unsigned* smids, uint64_t hold_ns) {
  const uint64_t t0 = ptx::globaltimer_ns();
  if (threadIdx.x == 0) smids[blockIdx.x] = ptx::smid();
  while (ptx::globaltimer_ns() - t0 < hold_ns) {
  }
}

}  // namespace

void fill_bf16_operand(void* dst, size_t count, OperandKind kind, uint64_t seed, cudaStream_t stream) {
  fill_bf16_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<uint16_t*>(dst), count, kind, seed);
  cuda_check_launch("the bf16 operand fill kernel");
}

unsigned long long WordChecksum::sum(const void* data, size_t bytes, cudaStream_t stream, const std::string& what,
                                     double deadline_s) {
  if (!result_.host()) result_ = MappedHostBuffer(sizeof(unsigned long long), "the checksum of " + what);
  auto* result = static_cast<volatile unsigned long long*>(result_.host());
  *result = 0;
  const size_t n = bytes / 8;
  const int blocks = int(std::clamp<size_t>((n + kThreads - 1) / kThreads, 1, kChecksumBlocks));
  checksum_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint64_t*>(data), n,
                                                   static_cast<unsigned long long*>(result_.device()));
  cuda_check_launch("the checksum kernel");
  wait_for_stream(stream, deadline_s, "the checksum of " + what);
  return *result;
}

// The build's shape (kernels/CMakeLists.txt), which CMake has checked already.
HbmStreamShape default_hbm_stream_shape() {
  return {P2PBENCH_HBM_UNROLL, size_t(P2PBENCH_HBM_CHUNK_KIB) << 10, P2PBENCH_HBM_BLOCKS_PER_SM,
          parse_hbm_hints(P2PBENCH_HBM_HINTS, "P2PBENCH_HBM_HINTS"), parse_hbm_layout(P2PBENCH_HBM_LAYOUT, "P2PBENCH_HBM_LAYOUT")};
}

void record_block_smids(unsigned* smids, int blocks, uint64_t hold_ns, cudaStream_t stream) {
  smid_probe_kernel<<<blocks, 32, 0, stream>>>(smids, hold_ns);
  cuda_check_launch("the SM probe kernel");
}

}  // namespace p2pbench::kernels
