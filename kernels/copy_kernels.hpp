// Host-side API of the SM-driven copy kernels (LD/ST and TMA). Plain C++: no device code,
// no MPI. Either pointer may be a peer mapping (CUDA IPC or peer access).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>

namespace p2pbench::kernels {

// ----- LD/ST: grid-wide copy of 16-byte vectors, `unroll` loads in flight per thread -----
struct LdstShape {
  int blocks = 0;
  int threads = 0;  // per block, 32..1024, multiple of 32
  int unroll = 0;   // 1, 2, 4 or 8
};

// Why this shape cannot run on `device`, or nullopt when it can.
std::optional<std::string> ldst_unsupported_reason(const LdstShape& shape, int device);

// One-time per-shape set-up on the current device (function attributes, shared-memory padding
// that keeps one block per SM). Call before ldst_copy with the same shape.
void ldst_prepare(const LdstShape& shape, int device);

// Enqueue one copy of `bytes` bytes from src to dst on `stream`. Any byte count, any
// alignment, including src and dst misaligned by different amounts. If `block_smids` is not
// null, block b writes the id of the SM it ran on to block_smids[b] (device memory).
void ldst_copy(const LdstShape& shape, const void* src, void* dst, size_t bytes, cudaStream_t stream,
               unsigned* block_smids = nullptr);

// ----- TMA: bulk async copies global -> shared -> global through a ring of stages -----
struct TmaShape {
  int blocks = 0;
  size_t smem_bytes = 0;  // per block, split into `stages` chunks
  int stages = 0;
};

std::optional<std::string> tma_unsupported_reason(const TmaShape& shape, int device);
void tma_prepare(const TmaShape& shape, int device);
void tma_copy(const TmaShape& shape, const void* src, void* dst, size_t bytes, cudaStream_t stream,
              unsigned* block_smids = nullptr);

}  // namespace p2pbench::kernels
