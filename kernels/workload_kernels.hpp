// Kernels of the interference workloads: the memory-bound HBM stream, the seeded
// bf16 operands of the GEMM and their checksums, and the SM probe of partition tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/cuda_raii.hpp"

namespace p2pbench::kernels {

// The GEMM's operands. Low-entropy operands draw less power and run faster (on one H200, 8192^3
// bf16 through torch: 725-864 TFLOP/s on the 17 eighths against 628-704 on Gaussian ones), so a
// workload that stands for a model's GEMM uses full-entropy values.
enum class OperandKind {
  kGaussian,  // bf16 of an approximately normal N(0, 1) value: every sign, exponent and mantissa bit in use
  kEighths,   // one of the 17 multiples of 1/8 in [-1, 1]: fp32 sums of their products are exact
};

// The bf16 bits of `f` rounded to nearest, ties to even (finite values), the same on host and
// device, so that the host's reference sees exactly the operands the GPU holds.
__host__ __device__ inline uint16_t bf16_bits(float f) {
  uint32_t u = 0;
  memcpy(&u, &f, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

__host__ __device__ inline float bf16_float(uint16_t bits) {
  const uint32_t u = uint32_t(bits) << 16;
  float f = 0;
  memcpy(&f, &u, sizeof f);
  return f;
}

// The operand's value at index `i` for `seed`, as the GPU holds it (bf16, returned as float).
// Gaussian: the sum of four uniform 16-bit draws (an integer below 2^18, exact in float),
// centred and scaled to unit variance with one float multiply (IEEE on host and device), then
// rounded to bf16. Eighths: exact in bf16, and every product is a multiple of 1/64, so fp32 sums
// of up to 2^18 terms are exact too. Host and device share this function.
__host__ __device__ inline float operand_value(OperandKind kind, uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  if (kind == OperandKind::kEighths) return float(int(z % 17) - 8) * 0.125f;
  const int64_t sum = int64_t(z & 0xffff) + int64_t((z >> 16) & 0xffff) + int64_t((z >> 32) & 0xffff) + int64_t(z >> 48);
  constexpr float kInverseSd = 1.0f / 37837.23f;  // four uniforms on 0..65535: sd = 65536 x sqrt(4 / 12)
  return bf16_float(bf16_bits(float(sum - 131070) * kInverseSd));
}

// Writes operand_value(kind, seed, i) as bf16 into `count` elements of `dst`.
void fill_bf16_operand(void* dst, size_t count, OperandKind kind, uint64_t seed, cudaStream_t stream);

// An order-sensitive checksum of device memory: the sum of word i * (2i + 1) modulo 2^64. Its
// result word is mapped host memory that lives as long as the object, allocated at the first sum:
// a sum that gave up at its deadline leaves its kernel queued, and the kernel must still find
// the word it adds to.
class WordChecksum {
 public:
  static constexpr double kDeadlineS = 60.0;

  // The checksum of `bytes` (a multiple of 8) at `data`, computed in `stream`'s order; waits for
  // the stream at most `deadline_s`, then throws a RuntimeFailure naming `what`.
  unsigned long long sum(const void* data, size_t bytes, cudaStream_t stream, const std::string& what,
                         double deadline_s = kDeadlineS);

 private:
  MappedHostBuffer result_;
};

// The memory-bound workload: copies `bytes` (a multiple of 16) from src to dst (both 16-byte
// aligned, in local HBM) with 16-byte loads and stores, `blocks` blocks of 1024 threads.
// HbmStreamShape says how; its default is the build's (P2PBENCH_HBM_* cache variables in
// kernels/CMakeLists.txt), chosen with scripts/hbm-shape-check.sh (the HbmWorkload.StreamShapes
// test times every shape against a plain device-to-device copy).
//
// Cache hints of the loads and stores (PTX wrappers in kernels/ptx.cuh):
//   none         read-only loads that allocate no L1 line (ld.global.nc.L1::no_allocate), plain
//                stores: the kernel as it was before the hints
//   streaming    cache-streaming loads and stores (ld.global.cs.nc, st.global.cs): evict first
//                in L1 and L2
//   evict_first  an L2 evict-first cache policy (createpolicy) on the loads and stores, neither
//                allocating in L1 (.L2::cache_hint)
//   prefetch     the `none` loads asking L2 for 256-byte fetches (.L2::256B), streaming stores
enum class HbmHints { none, streaming, evict_first, prefetch };
// How the bytes are shared out:
//   block_chunks  each block claims chunk_bytes at a time from a counter (the next claim is made
//                 while the current chunk is copied; one block barrier per chunk)
//   warp_chunks   each warp claims chunk_bytes at a time, with no block barrier at all
//   grid_stride   no counter: the grid sweeps the buffer as one front (chunk_bytes unused). Its
//                 blocks' work is fixed, so a block that must wait for a free SM (beside a
//                 transfer kernel, or a grid larger than a partition) leaves a tail: a reference
//                 for the stream alone rather than an interference workload
// Counter layouts let a grid larger than what is resident finish with no tail: late blocks find
// no chunk left and exit.
enum class HbmLayout { block_chunks, warp_chunks, grid_stride };

struct HbmStreamShape {
  int unroll;          // 16-byte loads in flight per thread: 2, 4 or 8
  size_t chunk_bytes;  // bytes a block (block_chunks) or a warp (warp_chunks) claims at a time
  int blocks_per_sm;   // resident blocks of 1024 threads per SM: 1 or 2 (2 needs <= 32 registers)
  HbmHints hints = HbmHints::none;
  HbmLayout layout = HbmLayout::block_chunks;
  // Before the stream, this many L2 sizes of the destination's head are written with plain
  // stores (0: none). Why: where earlier work (a copy, a TMA transfer) left the L2 full of its
  // own lines at normal priority, a stream with evict-first hints does not displace them and runs
  // as if unhinted: 2028 instead of 2105 GB/s on an H200. The stream was fast only where the
  // lines in the L2 were its destination's (after the destination's poison); the settle puts
  // them there, and the stream overwrites them first.
  double l2_settle = 1.0;
};
HbmStreamShape default_hbm_stream_shape();

const char* hbm_hints_name(HbmHints hints);
const char* hbm_layout_name(HbmLayout layout);
// The value named `name`; an InputError naming `key` otherwise.
HbmHints parse_hbm_hints(const std::string& name, const std::string& key);
HbmLayout parse_hbm_layout(const std::string& name, const std::string& key);
// "layout block_chunks hints none unroll 4 chunk 256 KiB blocks/SM 2" (the test's and the
// script's format; " L2 settle X" is added where l2_settle is not the default's).
std::string describe(const HbmStreamShape& shape);

// What the compiler made of a shape's kernel: registers per thread, bytes of local memory per
// thread (spills), and how many blocks of 1024 threads fit on one SM.
struct HbmStreamKernelInfo {
  int registers;
  size_t local_bytes;
  int resident_blocks_per_sm;
};
HbmStreamKernelInfo hbm_stream_kernel_info(const HbmStreamShape& shape);

void hbm_stream(const void* src, void* dst, size_t bytes, int blocks, unsigned long long* next_chunk, cudaStream_t stream,
                const HbmStreamShape& shape = default_hbm_stream_shape());
// Blocks that keep `sms` SMs (0: every SM of the device) busy with the HBM stream. An
// InputError when shape.blocks_per_sm blocks of the shape's kernel do not fit on one SM.
int hbm_stream_blocks(int device, const HbmStreamShape& shape = default_hbm_stream_shape(), int sms = 0);

// Partition probe: `blocks` blocks of one warp each record the SM they ran on in smids[block],
// each staying resident for `hold_ns` so that a launch spreads over every SM it may use.
void record_block_smids(unsigned* smids, int blocks, uint64_t hold_ns, cudaStream_t stream);

}  // namespace p2pbench::kernels
