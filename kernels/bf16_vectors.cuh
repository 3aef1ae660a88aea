// Eight bf16 at a time, as one 16-byte access (the address 16-byte aligned): what the put-built
// reduce-scatter of bf16 loads, stores and adds into a peer's memory. No tail of fewer: its
// chunks are whole vectors (vocab/collectives.hpp). The store is one st.global.v4, to global
// memory only, for the reason in f32_vectors.cuh (a uint4 assignment became four 4-byte stores).
#pragma once

#include <cuda_bf16.h>

#include "kernels/ptx.cuh"

namespace p2pbench::kernels {

constexpr int kBf16Vector = 8;

struct Bf16x8 {
  uint4 pairs;  // four bf16x2, the lower address in the low half of each
};

__device__ __forceinline__ Bf16x8 load_bf16x8(const __nv_bfloat16* p) { return {*reinterpret_cast<const uint4*>(p)}; }

__device__ __forceinline__ void store_bf16x8(__nv_bfloat16* p, const Bf16x8& x) {
  ptx::st_v4(p, x.pairs);
}

// A reduction at system scope: atomic with the adds other GPUs make to the same elements.
__device__ __forceinline__ void add_bf16x8_into(__nv_bfloat16* p, const Bf16x8& x) {
  ptx::red_add_sys_v4_bf16x2(p, x.pairs.x, x.pairs.y, x.pairs.z, x.pairs.w);
}

}  // namespace p2pbench::kernels
