// Up to four f32 at a time: one 16-byte access where n == 4 (the address 16-byte aligned),
// element by element for a tail of fewer. What the put-built collectives and the GEMM ->
// reduce-scatter pipeline load, store and add into a peer's memory. The tails index the vector
// with constants (each element under `i < n`): an index known only at run time puts the vector
// in local memory, in the kernels' main loops too (the collective kernel had a 32-byte stack and
// about a thousand local-memory accesses). The 16-byte store is one st.global.v4 (ptx::st_v4), to
// global memory only (a GPU's own or a peer's mapping): written as a float4 assignment, the
// compiler split it into four 4-byte stores in the collective kernel's loops (54 in its PTX), and
// the all-gather of those stores lost half its rate at 1024 threads a block on two H200
// (results/h200-nv18/all-gather-threads-2026-11-30/).
#pragma once

#include "kernels/ptx.cuh"

namespace p2pbench::kernels {

constexpr int kF32Vector = 4;

struct F32x4 {
  float v[kF32Vector];
};

__device__ __forceinline__ F32x4 load_f32(const float* p, int n) {
  F32x4 x = {};
  if (n == kF32Vector) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    x = {{q.x, q.y, q.z, q.w}};
  } else {
#pragma unroll
    for (int i = 0; i < kF32Vector; ++i)
      if (i < n) x.v[i] = p[i];
  }
  return x;
}

__device__ __forceinline__ uint4 bits_of(const F32x4& x) {
  return make_uint4(__float_as_uint(x.v[0]), __float_as_uint(x.v[1]), __float_as_uint(x.v[2]), __float_as_uint(x.v[3]));
}

// p in global memory.
__device__ __forceinline__ void store_f32(float* p, const F32x4& x, int n) {
  if (n == kF32Vector) return ptx::st_v4(p, bits_of(x));
#pragma unroll
  for (int i = 0; i < kF32Vector; ++i)
    if (i < n) p[i] = x.v[i];
}

// Reductions at system scope: atomic with the adds other GPUs make to the same elements.
__device__ __forceinline__ void add_f32_into(float* p, const F32x4& x, int n) {
  if (n == kF32Vector) return ptx::red_add_sys_v4_f32(p, x.v[0], x.v[1], x.v[2], x.v[3]);
#pragma unroll
  for (int i = 0; i < kF32Vector; ++i)
    if (i < n) ptx::red_add_sys_f32(p + i, x.v[i]);
}

__device__ __forceinline__ void accumulate_f32(F32x4& sum, const F32x4& x) {
  for (int i = 0; i < kF32Vector; ++i) sum.v[i] += x.v[i];
}

}  // namespace p2pbench::kernels
