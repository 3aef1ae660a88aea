// The operands and the reference of the collective methods. Element k of the input of the rank
// whose seed is s is collective_operand(s, k): an integer from -8 to 8 held as f32, from the
// pattern's hash, so every element of every rank differs and a sum of up to 8 ranks is exact in
// f32 whatever the order of its additions (atomic adds arrive in any order; nothing rounds).
// The output is checked against sums of these values computed from the seeds alone, apart from
// any algorithm under test.
//
// bf16 operands (reduce_scatter_add_bf16) are the same integers stored as bf16, exact in bf16's 8
// significant bits; so are the sums of up to 8 ranks (|sum| <= 64), so every partial sum the
// atomic adds make is exact whatever their order, and the check can still ask for equality. With
// real data it could not: a bf16 atomic add rounds its result to bf16 at each add, in the order
// the adds arrive, so such sums differ from run to run in their last bits (not reproducible).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/pattern_kernels.hpp"
#include "kernels/rank_barrier.hpp"
#include "vocab/collectives.hpp"

namespace p2pbench::kernels {

constexpr int kMaxCollectiveRanks = kMaxBarrierRanks;  // a barrier word per rank

// Writes elements [0, elements) of a rank's input.
void fill_collective_input(float* data, uint64_t elements, uint64_t seed, cudaStream_t stream);
void fill_collective_input(__nv_bfloat16* data, uint64_t elements, uint64_t seed, cudaStream_t stream);
// Fills `bytes` with NaN elements of `element` (no operand is NaN, so an unwritten element fails
// the check).
void poison_collective_output(void* data, uint64_t bytes, cudaStream_t stream,
                              CollectiveElement element = CollectiveElement::kF32);

// What rank `me` of `ranks` must hold after the operation: its chunk of the sum (reduce-scatter),
// every rank's input in rank order (all-gather), the whole sum (all-reduce), chunk `me` of every
// rank's input in rank order (all-to-all).
struct CollectiveReference {
  Collective op = Collective::kNone;
  CollectiveSize size;
  int ranks = 0;
  int me = 0;
  uint64_t seeds[kMaxCollectiveRanks] = {};  // each rank's input seed, by the rank's index
};

// Compares the output_elements(op, size) elements at `out` with the reference; mismatches count
// the element's bytes (4 or 2) per element, first_bad_offset in bytes. Throws RuntimeFailure
// where ref.size.element is not the type of `out`.
void check_collective_output(const float* out, const CollectiveReference& ref, PatternCheck* result, cudaStream_t stream);
void check_collective_output(const __nv_bfloat16* out, const CollectiveReference& ref, PatternCheck* result,
                             cudaStream_t stream);

}  // namespace p2pbench::kernels
