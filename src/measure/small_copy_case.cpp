// latency_ce: small cudaMemcpyAsync copies to the peer. Each sample times `ce_copies` copies
// one at a time, issue -> completion on the host clock (the figure), then the same copies
// queued back to back on CUDA events (the issue interval), and checks the last one's bytes.
#include <chrono>

#include "kernels/pattern_kernels.hpp"
#include "measure/latency_probes.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

namespace {

// What the sender reports after a sample of small copies.
struct SmallCopyTiming {
  double end_to_end_us = 0;  // median issue -> completion of one copy, on the host clock
  double interval_us = 0;    // per copy when queued back to back, on CUDA events
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SmallCopyTiming, end_to_end_us, interval_us)

class SmallCopyCase final : public CaseProcedure {
 public:
  SmallCopyCase(LatencyProbes& probes, const CaseSpec& c, uint64_t case_index)
      : p_(probes), c_(c), case_index_(case_index), copies_(probes.options().latency.ce_copies) {}

  bool agree_on_skips(CaseOutcome& out) override { return agree_on_latency_skips(p_, {}, out); }
  bool prepare(CaseOutcome& out) override {
    out.iterations = copies_;
    return true;
  }
  int warmup_samples() const override { return 1; }
  bool always_checks() const override { return true; }
  bool sample(int index, CaseOutcome& out) override;

 private:
  void copy(const char* what) const {
    cuda_check(cudaMemcpyAsync(p_.buffers().peer_dst(c_.dst_rank()), p_.buffers().local_src(), c_.bytes, cudaMemcpyDefault,
                               p_.stream()),
               what);
  }
  void time_copies(SmallCopyTiming& t) const;
  void check(uint64_t seed, StepReport& report) const;

  LatencyProbes& p_;
  CaseSpec c_;
  uint64_t case_index_;
  uint64_t copies_;
};

void SmallCopyCase::time_copies(SmallCopyTiming& t) const {
  std::vector<double> end_to_end;
  for (uint64_t k = 0; k < copies_; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    copy("enqueuing a small copy to the peer");
    // The figure is the round trip an application sees through cudaStreamSynchronize; a poll
    // under a deadline would add up to its period to it. The step's watchdog bounds this wait.
    cuda_check(cudaStreamSynchronize(p_.stream()), "waiting for a small copy");
    end_to_end.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  cuda_check(cudaEventRecord(p_.start(), p_.stream()), "recording the issue-interval start");
  for (uint64_t k = 0; k < copies_; ++k) copy("enqueuing back-to-back copies");
  p_.sync("back-to-back copies");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, p_.start(), p_.stop()), "reading the issue-interval time");
  t = {quantile(end_to_end, 0.5), double(ms) * 1e3 / double(copies_)};
}

void SmallCopyCase::check(uint64_t seed, StepReport& report) const {
  MappedHostBuffer result(sizeof(kernels::PatternCheck), "a verification result");
  auto* r = static_cast<kernels::PatternCheck*>(result.host());
  *r = {0, ~0ull};
  kernels::check_pattern(p_.buffers().local_dst(), c_.bytes, seed, 0, static_cast<kernels::PatternCheck*>(result.device()),
                         p_.stream());
  p_.sync("verifying small copies");
  if (r->mismatches)
    report.verify_error = "verification failed on rank " + std::to_string(p_.rank()) + ": " + std::to_string(r->mismatches) +
                          " bytes differ; first bad offset " + std::to_string(r->first_bad_offset);
}

bool SmallCopyCase::sample(int index, CaseOutcome& out) {
  const int me = p_.rank();
  const uint64_t seed = case_index_ * 1000003 + uint64_t(index + 1);
  auto prepared = p_.steps().run_reports("preparing copies", [&](StepReport&) {
    if (me == c_.src_rank()) kernels::fill_pattern(p_.buffers().local_src(), c_.bytes, seed, 0, p_.stream());
    if (me == c_.dst_rank()) kernels::fill_poison(p_.buffers().local_dst(), c_.bytes, seed, 0, p_.stream());
    p_.sync("filling and poisoning");
  });
  if (any_failed(prepared, out)) return false;
  auto copied = p_.steps().run<SmallCopyTiming>("timing small copies", [&](StepReport&, SmallCopyTiming& t) {
    if (me == c_.src_rank()) time_copies(t);
  });
  if (any_failed(reports_of(copied), out)) return false;
  auto verified = p_.steps().run_reports("verifying small copies", [&](StepReport& report) {
    if (me == c_.dst_rank()) check(seed, report);
  });
  if (any_failed(verified, out) || any_verify_failed(verified, out)) return false;
  if (index < 0) return true;
  const SmallCopyTiming& sender = copied[size_t(c_.src_rank())].data;
  out.latency_us.push_back(sender.end_to_end_us);
  out.issue_interval_us.push_back(sender.interval_us);
  return true;
}

}  // namespace

std::unique_ptr<CaseProcedure> small_copy_case(LatencyProbes& probes, const CaseSpec& c, uint64_t case_index) {
  return std::make_unique<SmallCopyCase>(probes, c, case_index);
}

}  // namespace p2pbench
