// latency_signal: a ping-pong between the pair's GPUs, both sides started by the gate; the
// initiator's elapsed time over its round trips, halved, is the one-way latency. The protocols
// (kernels/latency_kernels.hpp): the message's words carry the flag, or a put by the block's
// stores, by one TMA bulk copy or by the copy engine, then a flag.
#include <algorithm>

#include "common/event_wait.hpp"
#include "kernels/gate_kernels.hpp"
#include "kernels/latency_kernels.hpp"
#include "measure/latency_probes.hpp"

namespace p2pbench {

namespace {

// What each rank of a ping-pong reports after a sample (the initiator's figures are the row's).
struct PingPongTiming {
  double elapsed_ns = 0;
  double round_trips = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PingPongTiming, elapsed_ns, round_trips)

class PingPongCase final : public CaseProcedure {
 public:
  PingPongCase(LatencyProbes& probes, const CaseSpec& c, uint64_t case_index)
      : p_(probes), c_(c), in_pair_(probes.rank() == c.src_rank() || probes.rank() == c.dst_rank()) {
    args_ = arguments(case_index);
  }

  bool agree_on_skips(CaseOutcome& out) override {
    return agree_on_latency_skips(p_, [&]() -> std::optional<std::string> {
      if (!in_pair_) return std::nullopt;
      return kernels::ping_pong_unsupported_reason(args_);
    }, out);
  }

  bool prepare(CaseOutcome& out) override {
    out.iterations = args_.round_trips;
    auto prepared = p_.steps().run_reports("preparing a ping-pong", [&](StepReport&) {
      if (!in_pair_) return;  // the others keep step with the pair
      kernels::ping_pong_reset_inbox(p_.buffers().local_dst(), kernels::ping_pong_inbox_bytes(c_.bytes, args_.protocol),
                                     p_.stream());
      kernels::ping_pong_prepare(c_.bytes, args_.protocol);
      if (args_.protocol == kernels::SignalProtocol::kCeThenFlag && !watchdog_) {
        watchdog_ = make_stream("the ce_then_flag watchdog");
        args_.watchdog_stream = watchdog_.get();
      }
      p_.sync("resetting the inbox");
    });
    return !any_failed(prepared, out);
  }

  // Launch -1 warms up (module load, TLB). Both sides start at the gate with the same epoch,
  // so their sequence numbers never collide.
  int warmup_samples() const override { return 1; }
  bool always_checks() const override { return true; }
  bool sample(int index, CaseOutcome& out) override;

 private:
  kernels::PingPongArgs arguments(uint64_t case_index) const;
  void finish_sample(StepReport& r, PingPongTiming& t) const;

  LatencyProbes& p_;
  CaseSpec c_;
  bool in_pair_;
  kernels::PingPongArgs args_;
  Stream watchdog_;  // ce_then_flag's
};

kernels::PingPongArgs PingPongCase::arguments(uint64_t case_index) const {
  const int me = p_.rank();
  kernels::PingPongArgs args;
  args.my_inbox = p_.buffers().local_dst();  // polled here, written by the peer
  args.peer_inbox = in_pair_ ? p_.buffers().peer_dst(me == c_.src_rank() ? c_.dst_rank() : c_.src_rank()) : nullptr;
  args.payload_bytes = c_.bytes;
  // The config accepts only the names of vocab/variants.cpp, each a SignalProtocol (unit-tested).
  args.protocol = kernels::signal_protocol_named(c_.protocol.value_or("flag_in_data"))
                      .value_or(kernels::SignalProtocol::kFlagInData);
  args.round_trips = uint32_t(p_.options().latency.round_trips);
  // The copy engine's rounds are queued behind the gate at once: at most a stream's worth.
  if (args.protocol == kernels::SignalProtocol::kCeThenFlag)
    args.round_trips = std::min<uint32_t>(args.round_trips, kernels::kCePingPongMaxRounds);
  args.messages = p_.buffers().local_src();  // ce_then_flag's messages (4 MiB or more)
  args.initiator = me == c_.src_rank();
  args.seed = case_index * 7919 + 17;
  args.timeout_ns = uint64_t(p_.gate_timeout_s() * 1e9);
  args.heartbeat = p_.gate().heartbeat_word();
  args.result = static_cast<kernels::PingPongResult*>(p_.result_device());
  return args;
}

void PingPongCase::finish_sample(StepReport& r, PingPongTiming& t) const {
  if (!in_pair_) return;
  const auto* result = static_cast<const kernels::PingPongResult*>(p_.result_host());
  p_.sync("a ping-pong of " + c_.name());
  if (watchdog_) {  // ends once the rounds have (or after its timeout, releasing them)
    Event done = make_event("the ce_then_flag watchdog's end");
    cuda_check(cudaEventRecord(done.get(), watchdog_.get()), "recording the ce_then_flag watchdog's end");
    wait_for_event(done.get(), p_.gate_timeout_s() + 10.0, "the ce_then_flag watchdog");
  }
  if (result->timed_out)
    throw std::runtime_error("the ping-pong between rank " + std::to_string(c_.src_rank()) + " and rank " +
                             std::to_string(c_.dst_rank()) + " timed out after " + std::to_string(result->round_trips_done) +
                             " of " + std::to_string(args_.round_trips) + " round trips");
  if (result->bad_payloads)
    r.verify_error = "verification failed: " + std::to_string(result->bad_payloads) + " payloads arrived wrong on rank " +
                     std::to_string(p_.rank()) + " (first in round " + std::to_string(result->first_bad_round) + ")";
  t = {double(result->elapsed_ns), double(result->round_trips_done)};
}

bool PingPongCase::sample(int index, CaseOutcome& out) {
  args_.epoch = uint32_t(index + 1);
  const uint32_t ticket = p_.gate().next_ticket();
  GateRelease opens(p_.gate(), ticket);
  auto queued = p_.steps().run_reports("queueing a ping-pong", [&](StepReport&) {
    if (!in_pair_) return;
    *static_cast<kernels::PingPongResult*>(p_.result_host()) = {};
    kernels::enqueue_ping_pong_messages(args_, p_.stream());  // before the gate: off the clock
    kernels::enqueue_gate_wait(p_.gate().device_word(), ticket, uint64_t(p_.gate_timeout_s() * 1e9),
                               p_.gate().heartbeat_word(), static_cast<kernels::GateStamps*>(p_.stamps_device()), p_.stream());
    kernels::enqueue_ping_pong(args_, p_.stream());
  });
  opens.now();  // the node leader opens it
  auto finished = p_.steps().run<PingPongTiming>("finishing a ping-pong",
                                                 [&](StepReport& r, PingPongTiming& t) { finish_sample(r, t); });
  const auto finished_reports = reports_of(finished);
  if (any_failed(queued, out) || any_failed(finished_reports, out) || any_verify_failed(finished_reports, out)) return false;
  if (index < 0) return true;
  const PingPongTiming& initiator = finished[size_t(c_.src_rank())].data;
  out.latency_us.push_back(initiator.elapsed_ns / initiator.round_trips / 2.0 * 1e-3);
  return true;
}

}  // namespace

std::unique_ptr<CaseProcedure> ping_pong_case(LatencyProbes& probes, const CaseSpec& c, uint64_t case_index) {
  return std::make_unique<PingPongCase>(probes, c, case_index);
}

}  // namespace p2pbench
