// The compute workload: a bf16 GEMM (fp32 accumulation) through cuBLASLt, D = A * B, column-
// major, with the fastest of the heuristic's algorithms for the shape. The operands hold seeded
// values (kernels/workload_kernels.hpp: full-entropy Gaussian ones by default, or the low-entropy
// eighths), and sampled outputs are checked against a host float64 reference within bf16 rounding
// and fp32 accumulation's bound; every later result must equal the first verified one bit for bit.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/captured_kernels.hpp"
#include "common/cuda_raii.hpp"
#include "engines/cublaslt.hpp"
#include "kernels/workload_kernels.hpp"
#include "workloads/workload.hpp"

namespace p2pbench {

class GemmWorkload final : public Workload {
 public:
  GemmWorkload(const GemmShape& shape, int device);
  const char* unit() const override { return "TFLOP/s"; }
  double work_per_launch() const override { return shape_.flops() * 1e-12; }
  // cuBLASLt sizes its persistent grids by the SM count: a partition gets its own heuristic
  // query (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET) and its own fastest algorithm, chosen once.
  void set_sm_target(int sms, cudaStream_t stream) override;
  void enqueue(cudaStream_t stream) override;
  void poison_result(cudaStream_t stream) override;
  std::optional<std::string> check(cudaStream_t stream) override;
  std::string describe() const override;

  // The best figure of the heuristic's algorithms when they were timed (TFLOP/s).
  double best_tflops_when_chosen() const { return current_ ? current_->best_tflops : 0.0; }

  // A kernel of one launch of a choice, read from a capture of that launch (never launched) once
  // the choice was made: whether its blocks leave an SM free for a transfer's blocks is a matter
  // of its grid, which cuBLASLt picks and does not say.
  struct KernelGrid {
    CapturedKernel kernel;
    std::optional<int> resident_per_sm;  // blocks of it one SM holds at once
    std::string resident_unknown;        // why resident_per_sm is nullopt
  };
  // The current choice's kernels, in launch order; empty where the capture failed (then
  // grid_unread() says what failed: the grid is a description, not a reason to stop a run).
  const std::vector<KernelGrid>& grid() const { return choices_.at(sm_target_).grid; }
  const std::string& grid_unread() const { return choices_.at(sm_target_).grid_unread; }

 private:
  struct Choice;
  // Asks the heuristic for algorithms for the current SM target and returns the fastest that
  // runs (timed on `stream`), its grid not yet read.
  Choice choose_algorithm(cudaStream_t stream);
  // One launch of `algo` on `stream`.
  void launch(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream);
  // Sampled outputs against the host float64 reference; nullopt when within bf16 rounding.
  std::optional<std::string> check_against_reference(cudaStream_t stream) const;
  unsigned long long checksum(cudaStream_t stream);
  // Reads the kernels of one launch of the chosen algorithm into `choice`, from a capture on
  // `stream` (where the launches go: a partition's grid is sized by its context and target).
  void read_grid(Choice& choice, cudaStream_t stream);

  GemmShape shape_;
  LtHandle handle_;
  LtMatmulDesc op_;
  LtLayout a_layout_, b_layout_, d_layout_;
  DeviceBuffer a_, b_, d_, workspace_;
  struct Choice {
    cublasLtMatmulAlgo_t algo{};
    int index = -1, candidates = 0;
    double best_tflops = 0;
    std::vector<KernelGrid> grid;
    std::string grid_unread;
  };
  std::map<int, Choice> choices_;  // by SM target (0: the whole GPU)
  const Choice* current_ = nullptr;  // choices_'s element of the current SM target
  int sm_target_ = 0;
  int device_sms_ = 0;  // the whole GPU's, against which its choice's grid is read
  bool have_reference_checksum_ = false;
  unsigned long long reference_checksum_ = 0;
  kernels::WordChecksum checksum_;
};

}  // namespace p2pbench
