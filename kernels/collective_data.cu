#include "kernels/collective_data.hpp"

#include "common/cuda_check.hpp"
#include "kernels/pattern_device.cuh"

namespace p2pbench::kernels {
namespace {

constexpr int kThreads = 256;
constexpr uint32_t kPoisonBits = 0x7fbadbadu;  // a quiet NaN

__device__ __forceinline__ float collective_operand(uint64_t seed, uint64_t k) {
  return float(int(pattern_word(seed, k) % 17) - 8);
}

int blocks_for(uint64_t items) {
  const uint64_t wanted = (items + kThreads - 1) / kThreads;
  return int(wanted < 4096 ? (wanted ? wanted : 1) : 4096);
}

__global__ void fill_input(float* data, uint64_t elements, uint64_t seed) {
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < elements; k += uint64_t(gridDim.x) * blockDim.x)
    data[k] = collective_operand(seed, k);
}

__global__ void poison(uint32_t* words, uint64_t count) {
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < count; k += uint64_t(gridDim.x) * blockDim.x)
    words[k] = kPoisonBits;
}

// The reference's element k of rank me's output.
__device__ float expected(const CollectiveReference& ref, uint64_t k) {
  if (ref.op == Collective::kAllGather) {
    const uint64_t r = k / ref.size.chunk_elements;
    return collective_operand(ref.seeds[r], k - r * ref.size.chunk_elements);
  }
  const uint64_t index = ref.op == Collective::kReduceScatter ? uint64_t(ref.me) * ref.size.chunk_elements + k : k;
  float sum = 0;
  for (int r = 0; r < ref.ranks; ++r) sum += collective_operand(ref.seeds[r], index);
  return sum;
}

__global__ void check(const float* out, uint64_t elements, CollectiveReference ref, PatternCheck* result) {
  unsigned long long bad = 0, first = ~0ull;
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < elements; k += uint64_t(gridDim.x) * blockDim.x) {
    const float want = expected(ref, k);
    if (__float_as_uint(out[k]) == __float_as_uint(want) || (out[k] == 0.0f && want == 0.0f)) continue;
    bad += 4;
    if (first == ~0ull) first = k * 4;
  }
  if (bad) {
    atomicAdd(&result->mismatches, bad);
    atomicMin(&result->first_bad_offset, first);
  }
}

}  // namespace

void fill_collective_input(float* data, uint64_t elements, uint64_t seed, cudaStream_t stream) {
  fill_input<<<blocks_for(elements), kThreads, 0, stream>>>(data, elements, seed);
  cuda_check(cudaGetLastError(), "launching the collective operands' fill");
}

void poison_collective_output(void* data, uint64_t bytes, cudaStream_t stream) {
  const uint64_t words = bytes / 4;
  poison<<<blocks_for(words), kThreads, 0, stream>>>(static_cast<uint32_t*>(data), words);
  cuda_check(cudaGetLastError(), "launching the collective output's poison");
}

void check_collective_output(const float* out, const CollectiveReference& ref, PatternCheck* result, cudaStream_t stream) {
  const uint64_t elements = output_elements(ref.op, ref.size);
  check<<<blocks_for(elements), kThreads, 0, stream>>>(out, elements, ref, result);
  cuda_check(cudaGetLastError(), "launching the collective output's check");
}

}  // namespace p2pbench::kernels
