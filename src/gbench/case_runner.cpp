#include "gbench/case_runner.hpp"

#include "common/errors.hpp"
#include "gbench/case_registration.hpp"

namespace p2pbench::gbench {

CaseRunner::CaseRunner(TwoGpuSession& session, const CaseSpec& c)
    : session_(session), spec_(c), name_(benchmark_name(c)) {
  loop_ = std::make_unique<CaseLoop>(session_, session_.options(), spec_, session_.next_seed(), [](const CaseSpec& k) {
    std::unique_ptr<TransferEngine> engine = make_engine(k);
    if (!engine) throw InputError(std::string("method ") + to_string(k.method) + " has no transfer engine");
    return engine;
  });
}

std::optional<std::string> CaseRunner::unsupported_reason() {
  CaseOutcome out;
  if (loop_->agree_on_skips(out)) return std::nullopt;
  if (out.status == CaseStatus::kFailed) throw RuntimeFailure(out.error);
  return out.error;
}

void CaseRunner::prepare() {
  session_.ensure_buffers(BufferLayout::for_case(spec_.bytes, session_.options().buffer_pool_bytes).footprint());
  // Google Benchmark calls a case several times (iteration estimate, repetitions): its
  // statistics need the same batch size every time, fixed by the first calibration.
  const auto fixed = [&](uint64_t calibrated) { return session_.transfers_per_sample(name_, calibrated); };
  if (!loop_->prepare(outcome_, fixed)) throw RuntimeFailure(outcome_.error);
}

CaseRunner::Sample CaseRunner::sample() {
  if (!loop_->sample(samples_, outcome_)) throw RuntimeFailure(outcome_.error);
  ++samples_;
  const double seconds = outcome_.time_us.back() * 1e-6 * double(loop_->iterations());
  return {seconds, outcome_.overlap.empty() ? 1.0 : outcome_.overlap.back()};
}

std::optional<std::string> CaseRunner::verify_last_sample() {
  if (loop_->verify(samples_ - 1, outcome_)) return std::nullopt;
  return outcome_.error;
}

}  // namespace p2pbench::gbench
