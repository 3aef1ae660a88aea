#include "kernels/collective_data.hpp"

#include <string>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/pattern_device.cuh"

namespace p2pbench::kernels {
namespace {

constexpr int kDataThreads = 256;
constexpr uint32_t kF32PoisonBits = 0x7fbadbadu;   // a NaN
constexpr uint32_t kBf16PoisonBits = 0x7fba7fbau;  // two bf16 NaNs

__device__ __forceinline__ float collective_operand(uint64_t seed, uint64_t k) {
  return float(int(pattern_word(seed, k) % 17) - 8);
}

// An element from its value and back; for bf16 the operands and sums here convert exactly.
__device__ __forceinline__ void set_element(float& x, float v) { x = v; }
__device__ __forceinline__ void set_element(__nv_bfloat16& x, float v) { x = __float2bfloat16_rn(v); }
__device__ __forceinline__ float value_of(float x) { return x; }
__device__ __forceinline__ float value_of(__nv_bfloat16 x) { return __bfloat162float(x); }

int blocks_for(uint64_t items) {
  const uint64_t wanted = (items + kDataThreads - 1) / kDataThreads;
  return int(wanted < 4096 ? (wanted ? wanted : 1) : 4096);
}

template <class T>
__global__ void fill_input(T* data, uint64_t elements, uint64_t seed) {
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < elements; k += uint64_t(gridDim.x) * blockDim.x)
    set_element(data[k], collective_operand(seed, k));
}

__global__ void poison(uint32_t* words, uint64_t count, uint32_t bits) {
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < count; k += uint64_t(gridDim.x) * blockDim.x)
    words[k] = bits;
}

// The reference's element k of rank me's output.
__device__ float expected(const CollectiveReference& ref, uint64_t k) {
  if (ref.op == Collective::kAllGather) {
    const uint64_t r = k / ref.size.chunk_elements;
    return collective_operand(ref.seeds[r], k - r * ref.size.chunk_elements);
  }
  if (ref.op == Collective::kAllToAll) {  // chunk r: rank r's input chunk me
    const uint64_t r = k / ref.size.chunk_elements;
    return collective_operand(ref.seeds[r], uint64_t(ref.me) * ref.size.chunk_elements + k - r * ref.size.chunk_elements);
  }
  const uint64_t index = ref.op == Collective::kReduceScatter ? uint64_t(ref.me) * ref.size.chunk_elements + k : k;
  float sum = 0;
  for (int r = 0; r < ref.ranks; ++r) sum += collective_operand(ref.seeds[r], index);
  return sum;
}

// Equality of values: exact sums make it the test (a NaN, the poison, equals nothing; -0 == +0).
template <class T>
__global__ void check(const T* out, uint64_t elements, CollectiveReference ref, PatternCheck* result) {
  unsigned long long bad = 0, first = ~0ull;
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < elements; k += uint64_t(gridDim.x) * blockDim.x) {
    if (value_of(out[k]) == expected(ref, k)) continue;
    bad += sizeof(T);
    if (first == ~0ull) first = k * sizeof(T);
  }
  if (bad) {
    atomicAdd(&result->mismatches, bad);
    atomicMin(&result->first_bad_offset, first);
  }
}

template <class T>
void fill(T* data, uint64_t elements, uint64_t seed, cudaStream_t stream) {
  fill_input<<<blocks_for(elements), kDataThreads, 0, stream>>>(data, elements, seed);
  cuda_check(cudaGetLastError(), "launching the collective operands' fill");
}

template <class T>
void check_output(const T* out, CollectiveElement element, const CollectiveReference& ref, PatternCheck* result,
                  cudaStream_t stream) {
  if (ref.size.element != element)
    throw RuntimeFailure(std::string("a collective's output of ") + to_string(element) +
                         " checked against a reference of " + to_string(ref.size.element));
  const uint64_t elements = output_elements(ref.op, ref.size);
  check<<<blocks_for(elements), kDataThreads, 0, stream>>>(out, elements, ref, result);
  cuda_check(cudaGetLastError(), "launching the collective output's check");
}

}  // namespace

void fill_collective_input(float* data, uint64_t elements, uint64_t seed, cudaStream_t stream) {
  fill(data, elements, seed, stream);
}

void fill_collective_input(__nv_bfloat16* data, uint64_t elements, uint64_t seed, cudaStream_t stream) {
  fill(data, elements, seed, stream);
}

void poison_collective_output(void* data, uint64_t bytes, cudaStream_t stream, CollectiveElement element) {
  const uint64_t words = bytes / 4;
  const uint32_t bits = element == CollectiveElement::kBf16 ? kBf16PoisonBits : kF32PoisonBits;
  poison<<<blocks_for(words), kDataThreads, 0, stream>>>(static_cast<uint32_t*>(data), words, bits);
  cuda_check(cudaGetLastError(), "launching the collective output's poison");
}

void check_collective_output(const float* out, const CollectiveReference& ref, PatternCheck* result, cudaStream_t stream) {
  check_output(out, CollectiveElement::kF32, ref, result, stream);
}

void check_collective_output(const __nv_bfloat16* out, const CollectiveReference& ref, PatternCheck* result,
                             cudaStream_t stream) {
  check_output(out, CollectiveElement::kBf16, ref, result, stream);
}

}  // namespace p2pbench::kernels
