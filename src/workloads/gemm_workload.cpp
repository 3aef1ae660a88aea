#include "workloads/gemm_workload.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "common/bounded_copier.hpp"
#include "common/cuda_check.hpp"
#include "kernels/workload_kernels.hpp"
#include "common/event_wait.hpp"
#include "engines/cublaslt_library.hpp"

namespace p2pbench {

namespace {

constexpr uint64_t kSeedA = 0xA11CEull, kSeedB = 0xB0Bull;
constexpr size_t kWorkspaceBytes = 64ull << 20;  // ample for Hopper's split-K and stream-K kernels
constexpr int kHeuristicAlgorithms = 8;
constexpr int kTimedLaunches = 3;
constexpr int kSampledRows = 16, kSampledColumns = 16;
constexpr double kBf16Rounding = 1.0 / 256;  // bf16 keeps 8 significant bits: rounding errs by at most 2^-8 relative
constexpr double kFp32Unit = 1.0 / (1 << 24);  // fp32's unit roundoff

kernels::OperandKind operand_kind(const std::string& name) {
  return name == "eighths" ? kernels::OperandKind::kEighths : kernels::OperandKind::kGaussian;
}

}  // namespace

GemmWorkload::GemmWorkload(const GemmShape& shape, int /*device: the current one*/)
    : shape_(shape),
      a_(shape.m * shape.k * 2, "the GEMM's A operand"),
      b_(shape.k * shape.n * 2, "the GEMM's B operand"),
      d_(shape.m * shape.n * 2, "the GEMM's D result"),
      workspace_(kWorkspaceBytes, "the GEMM's workspace") {
  device_sms_ = sm_count(current_device());
  handle_ = make_lt_handle("the GEMM workload");
  op_ = make_bf16_matmul("the GEMM workload");
  auto layout = [](uint64_t rows, uint64_t cols, const char* what) {
    return make_layout(CUDA_R_16BF, rows, cols, rows, std::string("the GEMM's ") + what);
  };
  a_layout_ = layout(shape.m, shape.k, "A (m x k)");
  b_layout_ = layout(shape.k, shape.n, "B (k x n)");
  d_layout_ = layout(shape.m, shape.n, "D (m x n)");

  Stream stream = make_stream("the GEMM's set-up");
  kernels::fill_bf16_operand(a_.get(), shape.m * shape.k, operand_kind(shape.operands), kSeedA, stream.get());
  kernels::fill_bf16_operand(b_.get(), shape.k * shape.n, operand_kind(shape.operands), kSeedB, stream.get());
  set_sm_target(0, stream.get());
  // The reference: sampled outputs against float64 on the host, then the whole result's
  // checksum, which every later launch must reproduce.
  poison_result(stream.get());
  enqueue(stream.get());
  if (auto bad = check(stream.get())) throw RuntimeFailure("the GEMM alone gives a wrong result: " + *bad);
}

GemmWorkload::Choice GemmWorkload::choose_algorithm(cudaStream_t stream) {
  // Split-K partial sums only in fp32: bf16 partials (in-place or output-type reduction) would
  // round, and the result would no longer be exact, nor the same for every algorithm.
  const std::vector<cublasLtMatmulAlgo_t> algos =
      heuristic_algorithms(handle_.get(), op_.get(), a_layout_.get(), b_layout_.get(), d_layout_.get(), kWorkspaceBytes,
                           CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, kHeuristicAlgorithms, "the bf16 GEMM workload");
  Event start = make_event("the start of a GEMM timing"), stop = make_event("the end of a GEMM timing");
  Choice best;
  best.candidates = int(algos.size());
  double best_ms = 0;
  for (int i = 0; i < int(algos.size()); ++i) {
    const cublasLtMatmulAlgo_t& algo = algos[size_t(i)];
    try {
      launch(algo, stream);  // warm-up
    } catch (const RuntimeFailure&) {
      continue;  // cuBLASLt refused the algorithm before launching it: try the next one
    }
    cuda_check(cudaEventRecord(start.get(), stream), "recording a GEMM timing start");
    for (int l = 0; l < kTimedLaunches; ++l) launch(algo, stream);
    cuda_check(cudaEventRecord(stop.get(), stream), "recording a GEMM timing stop");
    wait_for_event(stop.get(), 60.0, "timing a GEMM algorithm");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "reading a GEMM timing");
    if (best.index < 0 || ms < best_ms) {
      best_ms = ms;
      best.index = i;
      best.algo = algo;
    }
  }
  if (best.index < 0)
    throw RuntimeFailure("cuBLASLt offers no bf16 GEMM algorithm for this shape and workspace on " +
                         (sm_target_ ? std::to_string(sm_target_) + " SMs" : std::string("the whole GPU")));
  best.best_tflops = kTimedLaunches * shape_.flops() / (best_ms * 1e-3) / 1e12;
  return best;
}

void GemmWorkload::set_sm_target(int sms, cudaStream_t stream) {
  set_sm_count_target(op_.get(), sms, "the GEMM workload");
  sm_target_ = sms;
  auto it = choices_.find(sms);
  if (it == choices_.end()) {
    Choice choice = choose_algorithm(stream);
    read_grid(choice, stream);
    it = choices_.emplace(sms, std::move(choice)).first;
  }
  current_ = &it->second;  // a std::map's elements stay where they are
}

void GemmWorkload::read_grid(Choice& choice, cudaStream_t stream) {
  // cuBLASLt supports capture, and with the fixed workspace a captured launch allocates nothing;
  // the graph is destroyed unlaunched, so the launches after it are as before.
  try {
    const auto one_launch = [&] { launch(choice.algo, stream); };
    for (const CapturedKernel& k : captured_kernels(stream, one_launch, "one launch of the bf16 GEMM")) {
      KernelGrid g{k, std::nullopt, {}};
      g.resident_per_sm = resident_blocks_per_sm(k, g.resident_unknown);
      choice.grid.push_back(std::move(g));
    }
    return;
  } catch (const CudaError& e) {
    if (e.sticky()) throw;  // the context is gone: not a matter of the description
    choice.grid_unread = e.what();
  } catch (const std::runtime_error& e) {  // the driver's calls (DriverFailure), cuBLASLt's status
    choice.grid_unread = e.what();
  }
  choice.grid.clear();
  (void)cudaGetLastError();  // the failed capture's error is in grid_unread, not the next launch's
}

void GemmWorkload::enqueue(cudaStream_t stream) {
  if (!current_) throw std::logic_error("the GEMM workload was launched before an algorithm was chosen");
  launch(current_->algo, stream);
}

void GemmWorkload::launch(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  cublas_check(cublaslt().Matmul(handle_.get(), op_.get(), &alpha, a_.get(), a_layout_.get(), b_.get(), b_layout_.get(), &beta,
                              d_.get(), d_layout_.get(), d_.get(), d_layout_.get(), &algo, workspace_.get(),
                              kWorkspaceBytes, stream),
               "launching the bf16 GEMM");
}

void GemmWorkload::poison_result(cudaStream_t stream) {
  cuda_check(cudaMemsetAsync(d_.get(), 0xFF, d_.size(), stream), "poisoning the GEMM's result (bf16 NaN)");
}

unsigned long long GemmWorkload::checksum(cudaStream_t stream) {
  return checksum_.sum(d_.get(), d_.size(), stream, "the GEMM workload's result");
}

std::optional<std::string> GemmWorkload::check_against_reference(cudaStream_t stream) const {
  const uint64_t m = shape_.m, n = shape_.n, k = shape_.k;
  const kernels::OperandKind kind = operand_kind(shape_.operands);
  // A copy into pageable memory would wait for the GEMM inside cudaMemcpyAsync, with no deadline.
  wait_for_stream(stream, kLocalWorkWaitS, "the GEMM before its check");
  BoundedCopier copier;
  std::vector<uint16_t> column(m);
  for (int c = 0; c < kSampledColumns; ++c) {
    const uint64_t j = (uint64_t(c) * 2654435761ull + 7) % n;
    copier.to_host(column.data(), static_cast<const uint16_t*>(d_.get()) + j * m, m * 2, "a column of the GEMM's result");
    for (int r = 0; r < kSampledRows; ++r) {
      const uint64_t i = (uint64_t(r) * 40503ull + uint64_t(c) * 977ull + 3) % m;
      double ref = 0, magnitude = 0;  // column-major: A(i, l) at i + l*m, B(l, j) at l + j*k
      for (uint64_t l = 0; l < k; ++l) {
        const double product = double(kernels::operand_value(kind, kSeedA, i + l * m)) *
                               double(kernels::operand_value(kind, kSeedB, l + j * k));
        ref += product;
        magnitude += std::fabs(product);
      }
      // D's bf16 rounding, plus fp32 accumulation's worst case (k unit roundoffs of the sum of
      // |products|; zero for the eighths, whose sums are exact).
      const double accumulation = kind == kernels::OperandKind::kEighths ? 0.0 : double(k) * kFp32Unit * magnitude;
      const double got = kernels::bf16_float(column[i]);
      if (!(std::fabs(got - ref) <= kBf16Rounding * std::fabs(ref) + accumulation + 1e-6))
        return "D(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(got) + ", the float64 reference is " +
               std::to_string(ref);
    }
  }
  return std::nullopt;
}

std::optional<std::string> GemmWorkload::check(cudaStream_t stream) {
  if (!have_reference_checksum_) {
    if (auto bad = check_against_reference(stream)) return bad;
    reference_checksum_ = checksum(stream);
    have_reference_checksum_ = true;
    return std::nullopt;
  }
  const unsigned long long now = checksum(stream);
  if (now == reference_checksum_) return std::nullopt;
  if (auto bad = check_against_reference(stream)) return bad;
  return "the GEMM's result differs from its first verified result (checksum " + std::to_string(now) + " vs " +
         std::to_string(reference_checksum_) + "), though the sampled elements are within bf16 rounding";
}

namespace {

// ", at most 1 resident per SM: one wave": how many rounds of `sms` SMs the kernel's blocks take
// when each SM holds as many as the occupancy calculator says, from those numbers alone; one wave:
// every block is resident at once, and an SM it holds frees only as that block ends.
std::string waves(const GemmWorkload::KernelGrid& g, int sms) {
  if (!g.resident_per_sm) return "; blocks resident per SM unknown: " + g.resident_unknown;
  const uint64_t wave = uint64_t(sms) * uint64_t(*g.resident_per_sm);
  const std::string text = ", at most " + std::to_string(*g.resident_per_sm) + " resident per SM";
  if (wave == 0) return text;
  const uint64_t rounds = (g.kernel.blocks() + wave - 1) / wave;
  return text + ": " + (rounds == 1 ? std::string("one wave") : std::to_string(rounds) + " waves");
}

// "; grid 132 blocks of 384 threads, 200.0 KiB dynamic shared memory each (1.00 per SM of 132,
// at most 1 resident per SM: one wave)", per kernel of a launch, against the SMs of its choice.
std::string describe_grid(const std::vector<GemmWorkload::KernelGrid>& grid, const std::string& unread, int sms) {
  if (!unread.empty()) return "; grid unread (" + unread + ")";
  if (grid.empty()) return "; grid: no kernel in a captured launch";
  std::string text = "; grid ";
  for (size_t i = 0; i < grid.size(); ++i) {
    const CapturedKernel& k = grid[i].kernel;
    char figure[200];
    std::snprintf(figure, sizeof figure,
                  "%s%llu blocks of %llu threads, %.1f KiB dynamic shared memory each (%.2f per SM of %d",
                  i ? " then " : "", (unsigned long long)k.blocks(), (unsigned long long)k.threads_per_block(),
                  k.dynamic_shared_bytes / 1024.0, double(k.blocks()) / sms, sms);
    text += figure + waves(grid[i], sms) + ")";
  }
  return text;
}

}  // namespace

std::string GemmWorkload::describe() const {
  std::string text = "gemm bf16 (fp32 accumulation) " + std::to_string(shape_.m) + "x" + std::to_string(shape_.n) + "x" +
                     std::to_string(shape_.k) + " through cuBLASLt, " +
                     (shape_.operands == "eighths" ? "eighths operands (17 values in [-1, 1], low entropy)"
                                                   : "gaussian operands (bf16 of N(0, 1), full entropy)") +
                     "; the fastest of the heuristic's candidates";
  for (const auto& [sms, c] : choices_) {
    if (sms != 0 && sms != sm_target_) continue;  // the whole GPU's choice and the current partition's
    char figure[160];
    std::snprintf(figure, sizeof figure, "; %s: algorithm %d of %d, %.1f TFLOP/s when timed",
                  sms ? (std::to_string(sms) + " SMs").c_str() : "whole GPU", c.index, c.candidates, c.best_tflops);
    text += figure + describe_grid(c.grid, c.grid_unread, sms ? sms : device_sms_);
  }
  return text;
}

}  // namespace p2pbench
