#include "methods/gemm_rs/tile_gemm.hpp"

#include <cmath>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "engines/cublaslt_library.hpp"
#include "kernels/workload_kernels.hpp"

namespace p2pbench::gemm_rs {
namespace {

constexpr size_t kWorkspaceBytes = 32ull << 20;
constexpr int kHeuristicAlgorithms = 8;
constexpr double kFp32Unit = 1.0 / (1 << 24);
constexpr auto kOperands = kernels::OperandKind::kGaussian;

uint64_t seed_a(int rank) { return 0xA11CEull + uint64_t(rank) * 7919; }
uint64_t seed_b(int rank) { return 0xB0Bull + uint64_t(rank) * 104729; }

}  // namespace

TileGemm::TileGemm(const TileSchedule& s, int rank, int sm_target, cudaStream_t stream)
    : s_(s),
      a_(s.m * s.k * 2, "the pipeline GEMM's A"),
      b_(s.k * s.n * 2, "the pipeline GEMM's B"),
      d_(s.m * s.n * 4, "the pipeline GEMM's D"),
      workspace_(kWorkspaceBytes, "the pipeline GEMM's workspace") {
  handle_ = make_lt_handle("the pipeline GEMM");
  op_ = make_bf16_matmul("the pipeline GEMM");
  set_sm_count_target(op_.get(), sm_target, "the pipeline GEMM");
  a_layout_ = make_layout(CUDA_R_16BF, s.m, s.k, s.m, "the pipeline GEMM's A (m x k)");
  b_layout_ = make_layout(CUDA_R_16BF, s.k, s.columns(), s.k, "a tile of the pipeline GEMM's B (k x n / tiles)");
  d_layout_ = make_layout(CUDA_R_32F, s.m, s.columns(), s.m, "a tile of the pipeline GEMM's D (m x n / tiles)");
  kernels::fill_bf16_operand(a_.get(), s.m * s.k, kOperands, seed_a(rank), stream);
  kernels::fill_bf16_operand(b_.get(), s.k * s.n, kOperands, seed_b(rank), stream);

  // No split-K: its CTAs wait for each other's partial sums, and beside the reduce-scatter's
  // spinning blocks (no green-context partition under MPS) a CTA that cannot become resident
  // would keep the others waiting for good (seen: a whole-D tile on one H200 under MPS).
  const std::vector<cublasLtMatmulAlgo_t> algos =
      heuristic_algorithms(handle_.get(), op_.get(), a_layout_.get(), b_layout_.get(), d_layout_.get(), kWorkspaceBytes,
                           CUBLASLT_REDUCTION_SCHEME_NONE, kHeuristicAlgorithms, "the pipeline GEMM's tile");
  if (algos.empty())
    throw RuntimeFailure("cuBLASLt offers no algorithm without split-K for a " + std::to_string(s.m) + " x " +
                         std::to_string(s.columns()) + " x " + std::to_string(s.k) + " tile of bf16 -> f32");
  algo_ = algos.front();  // the heuristic's first
}

void TileGemm::enqueue_tile(uint64_t t, cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  const auto* b = static_cast<const uint16_t*>(b_.get()) + t * s_.columns() * s_.k;
  float* d = this->d() + s_.first_element(t);
  cublas_check(cublaslt().Matmul(handle_.get(), op_.get(), &alpha, a_.get(), a_layout_.get(), b, b_layout_.get(), &beta, d,
                              d_layout_.get(), d, d_layout_.get(), &algo_, workspace_.get(), kWorkspaceBytes, stream),
               "launching tile " + std::to_string(t) + " of the pipeline GEMM");
}

double TileGemm::reference(const TileSchedule& s, int rank, uint64_t i, uint64_t j, double& bound) {
  double sum = 0, magnitude = 0;  // column-major: A(i, l) at i + l m, B(l, j) at l + j k
  for (uint64_t l = 0; l < s.k; ++l) {
    const double product = double(kernels::operand_value(kOperands, seed_a(rank), i + l * s.m)) *
                           double(kernels::operand_value(kOperands, seed_b(rank), l + j * s.k));
    sum += product;
    magnitude += std::fabs(product);
  }
  bound = double(s.k) * kFp32Unit * magnitude;  // fp32 accumulation's worst case
  return sum;
}

}  // namespace p2pbench::gemm_rs
