#include "gbench/case_runner.hpp"

#include <algorithm>

#include "common/errors.hpp"
#include "gbench/case_registration.hpp"
#include "kernels/pattern_kernels.hpp"
#include "stats/statistics.hpp"

namespace p2pbench::gbench {

namespace {

// Opens the gate when it goes out of scope, also when queueing failed half-way: a GPU that did
// queue must never spin until its gate timeout.
class GateRelease {
 public:
  GateRelease(TwoGpuSession& session, uint32_t ticket) : session_(session), ticket_(ticket) {}
  ~GateRelease() { session_.release_gate(ticket_); }
  GateRelease(const GateRelease&) = delete;
  GateRelease& operator=(const GateRelease&) = delete;

 private:
  TwoGpuSession& session_;
  uint32_t ticket_;
};

}  // namespace

CaseRunner::CaseRunner(TwoGpuSession& session, const CaseSpec& c)
    : session_(session),
      spec_(c),
      name_(benchmark_name(c)),
      layout_(BufferLayout::for_case(c.bytes, session.options().buffer_pool_bytes)) {
  for (const Flow& o : flows_of(c)) {
    Lane lane{o, CaseSpec::engine_rank(c.direction, o.src_rank, o.dst_rank), make_engine(c)};
    if (!lane.engine) throw InputError(std::string("method ") + to_string(c.method) + " has no transfer engine");
    lanes_.push_back(std::move(lane));
  }
}

std::optional<std::string> CaseRunner::unsupported_reason() const {
  for (const Lane& lane : lanes_)
    if (auto why = lane.engine->unsupported_reason(session_.gpu(lane.driver).device)) return why;
  return std::nullopt;
}

Transfer CaseRunner::transfer(const Lane& lane, uint64_t index) const {
  return lane.engine->transfer(spec_.direction, session_.endpoints(lane.driver), (index % layout_.slots) * layout_.stride,
                               size_t(spec_.bytes));
}

void CaseRunner::fill_sources(uint64_t seed, bool poison_destinations) {
  for (const Lane& lane : lanes_) {
    const int src = lane.o.src_rank, dst = lane.o.dst_rank;
    session_.use(src);
    kernels::fill_pattern(lane.engine->source_region(session_.endpoints(src)), layout_.footprint(), seed, 0,
                          timer_of(src).stream());
    if (!poison_destinations) continue;
    session_.use(dst);
    kernels::fill_poison(lane.engine->destination_region(session_.endpoints(dst)), layout_.footprint(), seed, 0,
                         timer_of(dst).stream());
  }
  for (int slot = 0; slot < 2; ++slot) {
    session_.use(slot);
    cuda_check(cudaStreamSynchronize(timer_of(slot).stream()), "filling and poisoning the buffers");
  }
}

void CaseRunner::prepare() {
  const RunnerOptions& o = session_.options();
  session_.ensure_buffers(layout_.footprint());
  for (int slot = 0; slot < 2; ++slot) {
    session_.use(slot);
    cuda_check(cudaDeviceSynchronize(), "finishing earlier work");
  }
  seed_ = session_.next_seed();
  fill_sources(seed_, false);

  double slowest_ms = 0;
  for (Lane& lane : lanes_) {
    session_.use(lane.driver);
    lane.engine->prepare(session_.gpu(lane.driver).device, lane.driver, {lane.o});
    TransferTimer& timer = timer_of(lane.driver);
    if (auto sms = lane.engine->measure_sms_used(transfer(lane, 0), timer.stream()))
      sms_used_ = std::max(sms_used_.value_or(0), *sms);
    const double single_ms =
        timer.time_single_ms([&](uint64_t i, cudaStream_t s) { lane.engine->launch(transfer(lane, i), s); });
    slowest_ms = std::max(slowest_ms, single_ms);
    iterations_ = std::max(iterations_, TransferTimer::iterations_for(single_ms, o.min_sample_time_ms));
  }
  iterations_ = session_.transfers_per_sample(name_, iterations_);
  // Every driving GPU replays the same number of transfers per sample.
  for (Lane& lane : lanes_) {
    session_.use(lane.driver);
    TransferTimer& timer = timer_of(lane.driver);
    timer.build([&](uint64_t i, cudaStream_t s) { lane.engine->launch(transfer(lane, i), s); }, iterations_);
    timer.warm_up(o.warmup_time_ms);
  }
  // A sample should take about slowest_ms * iterations_: allow a hundred times that, plus slack.
  deadline_s_ = o.gate_timeout_s * o.timeout_scale + o.timeout_scale * (10.0 + 0.1 * slowest_ms * double(iterations_));
}

CaseRunner::Sample CaseRunner::sample() {
  const RunnerOptions& o = session_.options();
  if (o.verify) {
    seed_ = session_.next_seed();
    fill_sources(seed_, true);
  }
  const uint32_t ticket = session_.next_ticket();
  {
    GateRelease release(session_, ticket);
    for (const Lane& lane : lanes_) {
      session_.use(lane.driver);
      timer_of(lane.driver).enqueue_gated(session_.gate_word(), ticket, o.gate_timeout_s * o.timeout_scale);
    }
  }
  TransferTimer::Sample s[2] = {};
  for (size_t i = 0; i < lanes_.size(); ++i) {
    session_.use(lanes_[i].driver);
    s[i] = timer_of(lanes_[i].driver).wait(deadline_s_, "a sample of " + name_);
  }
  if (lanes_.size() == 1) return {s[0].elapsed_ms * 1e-3, 1.0};
  // Both windows open at the gate's release (one host store both GPUs see), each measured by
  // its own GPU's timer: the union is the longer one. As in the MPI driver.
  const WindowPair pair = combine(Window{0.0, s[0].window_ns}, Window{0.0, s[1].window_ns});
  return {pair.union_ns * 1e-9, pair.overlap()};
}

std::optional<std::string> CaseRunner::verify_last_sample() {
  if (!session_.options().verify) return std::nullopt;
  const uint64_t slots_used = std::min<uint64_t>(layout_.slots, iterations_);
  for (const Lane& lane : lanes_) {
    const int owner = lane.o.dst_rank;
    session_.use(owner);
    char* dst = static_cast<char*>(lane.engine->destination_region(session_.endpoints(owner)));
    for (uint64_t k = 0; k < slots_used; ++k) {
      if (auto bad = lane.engine->verify(dst + k * layout_.stride, spec_.bytes, seed_, k * layout_.stride,
                                         timer_of(owner).stream()))
        return "verification failed on GPU " + std::to_string(session_.gpu(owner).device) + " (data from GPU " +
               std::to_string(session_.gpu(lane.o.src_rank).device) + ", slot " + std::to_string(k) + "): " + *bad;
    }
  }
  return std::nullopt;
}

}  // namespace p2pbench::gbench
