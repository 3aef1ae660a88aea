// One bf16 GEMM on the rank's own GPU (configs/one-gpu.json): what its tensor cores compute,
// beside what its links and memory move. It is the GEMM of the GEMM -> reduce-scatter pipeline
// (methods/gemm_rs/tile_gemm.hpp) as one tile: D (f32, m x m, m = sqrt(bytes / 4)) = A (bf16,
// m x k) B (bf16, k x m) with full-entropy operands (bf16 of N(0, 1): low-entropy operands draw
// less power and run faster, which a real model's GEMM does not), K the gemm_k axis, one
// cuBLASLt call (the heuristic's first algorithm without split-K), so its figure compares with
// gemm_rs_gemm_only's. The row adds TFLOP/s (2 m m k per GEMM over its time) beside time_us.
// Verified: D is poisoned (NaN) before each sample; after the first, sampled elements against a
// float64 host reference and the checksum of all of D; after later samples, that checksum bit
// for bit (no split-K: the algorithm is deterministic).
#include <cmath>
#include <memory>

#include "common/bounded_copier.hpp"
#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"
#include "engines/engine_registry.hpp"
#include "kernels/workload_kernels.hpp"
#include "methods/gemm/gemm_row_fields.hpp"
#include "methods/gemm_rs/tile_gemm.hpp"

namespace p2pbench {
namespace {

constexpr int kSampledElements = 64;

class GemmEngine final : public TransferEngine {
 public:
  explicit GemmEngine(const CaseSpec& c) : rank_(c.flows.front().src_rank) {
    schedule_ = gemm_rs::tile_schedule(c.bytes, c.gemm_k.value_or(0), 1, 1, why_);
  }

  std::optional<std::string> unsupported_reason(int) const override {
    if (!schedule_) return why_;
    return std::nullopt;
  }
  void prepare(int, int, const std::vector<Flow>&) override {
    if (gemm_) return;
    Stream stream = make_stream("the GEMM's set-up");
    gemm_ = std::make_unique<gemm_rs::TileGemm>(*schedule_, rank_, /*sm_target=*/0, stream.get());
    wait_for_stream(stream.get(), kLocalWorkWaitS, "the filling of the GEMM's operands");
  }
  bool rotates_buffers() const override { return false; }
  Transfer transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const override {
    return local_transfer(e, offset, bytes);
  }
  void fill_source(void*, size_t, uint64_t, cudaStream_t) override {}  // the operands are the GEMM's own
  void poison_destination(void*, size_t, uint64_t, cudaStream_t stream) override {
    if (gemm_) cuda_check(cudaMemsetAsync(gemm_->d(), 0xFF, d_bytes(), stream), "poisoning the GEMM's D (f32 NaN)");
  }
  void launch(const Transfer&, cudaStream_t stream) override {
    if (!gemm_) throw RuntimeFailure("the GEMM was launched before prepare()");
    gemm_->enqueue_tile(0, stream);
  }
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }
  std::optional<std::string> verify(const void*, size_t, uint64_t, uint64_t, cudaStream_t stream) override;

 private:
  size_t d_bytes() const { return schedule_->m * schedule_->n * 4; }
  unsigned long long checksum(cudaStream_t stream);
  std::optional<std::string> check_sampled(cudaStream_t stream);

  int rank_;
  std::optional<gemm_rs::TileSchedule> schedule_;
  std::string why_;
  std::unique_ptr<gemm_rs::TileGemm> gemm_;
  std::optional<unsigned long long> reference_checksum_;
  kernels::WordChecksum checksum_;
  BoundedCopier element_reader_;
};

unsigned long long GemmEngine::checksum(cudaStream_t stream) {
  return checksum_.sum(gemm_->d(), d_bytes(), stream, "the GEMM's D");
}

// Elements spread over D against the float64 sum, within fp32 accumulation's bound.
std::optional<std::string> GemmEngine::check_sampled(cudaStream_t stream) {
  const gemm_rs::TileSchedule& s = *schedule_;
  wait_for_stream(stream, kLocalWorkWaitS, "the GEMM before its check");
  for (int n = 0; n < kSampledElements; ++n) {
    const uint64_t e = (uint64_t(n) * 2654435761ull + 13) % (s.m * s.n);
    const uint64_t i = e % s.m, j = e / s.m;  // column-major
    const float got = element_reader_.read(gemm_->d() + e, "an element of the GEMM's D");
    double bound = 0;
    const double want = gemm_rs::TileGemm::reference(s, rank_, i, j, bound);
    if (!(std::fabs(double(got) - want) <= bound + 1e-6))
      return "D(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(got) +
             ", the float64 reference is " + std::to_string(want) + " (bound " + std::to_string(bound) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> GemmEngine::verify(const void*, size_t, uint64_t, uint64_t, cudaStream_t stream) {
  if (!gemm_) return std::string("the GEMM was verified before prepare()");
  if (!reference_checksum_) {
    if (auto bad = check_sampled(stream)) return bad;
    reference_checksum_ = checksum(stream);
    return std::nullopt;
  }
  const unsigned long long now = checksum(stream);
  if (now == *reference_checksum_) return std::nullopt;
  if (auto bad = check_sampled(stream)) return bad;
  return "the GEMM's D differs from its first verified D (checksum " + std::to_string(now) + " vs " +
         std::to_string(*reference_checksum_) + "), though the sampled elements are right";
}

bool inner_dimension(uint64_t v) { return v >= 16 && v <= 65536 && v % 16 == 0; }

MethodInfo gemm_info() {
  MethodInfo m{Method{}, "gemm", MethodKind::kLocal, {}, "GEMM (bf16, full-entropy)", "tab:gray", 52, false, "",
               "one bf16 GEMM on the rank's own GPU through cuBLASLt, full-entropy operands, f32 D of `bytes` "
               "(m = n = sqrt(bytes / 4)), K = gemm_k; rows add tflops",
               {{ShapeAxis::kGemmK, {8192}, inner_dimension, "gemm_k must be a multiple of 16 from 16 to 65536",
                 "the GEMM's inner dimension K (bf16 operands, f32 D of bytes = 4 m^2)"}}};
  m.push_only = true;
  m.row_fields = gemm_row_fields();
  return m;
}

}  // namespace

P2PBENCH_REGISTER_METHOD(kGemm, gemm_info(), [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
  return std::make_unique<GemmEngine>(c);
});

}  // namespace p2pbench
