// Kernels of the interference workloads (issue 13): the memory-bound HBM stream, the seeded
// bf16 operands of the GEMM and their checksums, and the SM probe of partition tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace p2pbench::kernels {

// The GEMM operands' value at index `i` for `seed`: one of the 17 multiples of 1/8 in [-1, 1].
// Exact in bf16, and every product is a multiple of 1/64, so fp32 sums of up to 2^18 terms are
// exact too: a host double reference and the GPU agree except for the bf16 rounding of D.
// Host and device share this function.
__host__ __device__ inline float operand_value(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return float(int(z % 17) - 8) * 0.125f;
}

// Writes operand_value(seed, i) as bf16 into `count` elements of `dst`.
void fill_bf16_operand(void* dst, size_t count, uint64_t seed, cudaStream_t stream);

// An order-sensitive checksum of `bytes` (a multiple of 8) at `data`: sum of word * (2i + 1)
// modulo 2^64, added into *result (device or mapped memory; zero it first).
void checksum_words(const void* data, size_t bytes, unsigned long long* result, cudaStream_t stream);

// The memory-bound workload: copies `bytes` (a multiple of 16) from src to dst, both in local
// HBM, with streaming loads. Blocks take chunks (shape.chunk_bytes) from `*next_chunk` (device memory, zeroed
// here before the kernel), so a grid larger than a partition's resident blocks leaves no tail:
// late blocks find no chunk left and exit.
// How the HBM stream copies: 16-byte loads in flight per thread (4 or 8), bytes a block claims
// at a time, and blocks per SM (1 or 2, of 1024 threads). The default is the build's
// (P2PBENCH_HBM_UNROLL, P2PBENCH_HBM_CHUNK_KIB, P2PBENCH_HBM_BLOCKS_PER_SM in CMake), chosen
// from the variants test (tests/interference: HbmWorkload.StreamShapes) on an H200.
struct HbmStreamShape {
  int unroll;
  size_t chunk_bytes;
  int blocks_per_sm;
};
HbmStreamShape default_hbm_stream_shape();

void hbm_stream(const void* src, void* dst, size_t bytes, int blocks, unsigned long long* next_chunk, cudaStream_t stream,
                const HbmStreamShape& shape = default_hbm_stream_shape());
// Blocks that keep every SM of the device busy with the HBM stream.
int hbm_stream_blocks(int device, const HbmStreamShape& shape = default_hbm_stream_shape());

// Partition probe: `blocks` blocks of one warp each record the SM they ran on in smids[block],
// each staying resident for `hold_ns` so that a launch spreads over every SM it may use.
void record_block_smids(unsigned* smids, int blocks, uint64_t hold_ns, cudaStream_t stream);

}  // namespace p2pbench::kernels
