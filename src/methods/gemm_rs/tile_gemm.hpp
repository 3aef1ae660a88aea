// The pipeline's GEMM, one cuBLASLt call per column tile: D[:, tile] = A B[:, tile] with bf16
// A (m x k) and B (k x n), f32 D (m x n), all column-major, so a tile of B and of D is
// contiguous. The operands are full-entropy (kernels/workload_kernels.hpp, Gaussian bf16) and
// seeded per rank; check() samples D against a float64 host reference.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

#include "common/cuda_raii.hpp"
#include "engines/cublaslt.hpp"
#include "methods/gemm_rs/tile_schedule.hpp"

namespace p2pbench::gemm_rs {

class TileGemm {
 public:
  // Allocates and fills the operands of `rank` (current device) and picks cuBLASLt's algorithm
  // for one tile on `sm_target` SMs (0: the whole GPU), timing nothing: the heuristic's first.
  TileGemm(const TileSchedule& s, int rank, int sm_target, cudaStream_t stream);
  // Tile t of D, on `stream`.
  void enqueue_tile(uint64_t t, cudaStream_t stream) const;
  float* d() const { return static_cast<float*>(d_.get()); }
  // The value the reference gives D_rank(i, j), and the bound of fp32 accumulation's error on it.
  static double reference(const TileSchedule& s, int rank, uint64_t i, uint64_t j, double& bound);

 private:
  TileSchedule s_;
  DeviceBuffer a_, b_, d_, workspace_;
  LtHandle handle_;
  LtMatmulDesc op_;
  LtLayout a_layout_, b_layout_, d_layout_;
  cublasLtMatmulAlgo_t algo_{};
};

}  // namespace p2pbench::gemm_rs
