#include "measure/latency_probes.hpp"

#include "kernels/gate_kernels.hpp"
#include "measure/transfer_timer.hpp"

namespace p2pbench {

namespace {
constexpr size_t kResultBytes = 256;  // room for any of the kernels' result structs
}  // namespace

LatencyProbes::LatencyProbes(const Communicator& comm, const RunnerOptions& options, SharedGate& gate,
                             PeerBuffers& buffers, double peak_sm_clock_mhz)
    : comm_(comm),
      steps_(comm, options.watchdog, options.faults),
      options_(options),
      gate_(gate),
      buffers_(buffers),
      stream_(make_stream("latency probes")),
      start_(make_event("latency start")),
      stop_(make_event("latency stop")),
      result_(kResultBytes, "latency results"),
      stamps_(sizeof(kernels::GateStamps), "latency gate stamps"),
      peak_sm_clock_mhz_(peak_sm_clock_mhz) {}

void LatencyProbes::sync(const std::string& what) const {
  cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording an event after " + what);
  wait_for_event(stop_.get(), (options_.gate_timeout_s + 30.0) * options_.timeout_scale, what);
}

// A latency method's procedure is that of what its sample is made of (its SampleCost).
std::unique_ptr<CaseProcedure> LatencyProbes::procedure_for(const CaseSpec& c, uint64_t case_index) {
  switch (is_latency(c.method) ? method_info(c.method).cost : SampleCost::kTimedTransfers) {
    case SampleCost::kRoundTrips: return ping_pong_case(*this, c, case_index);
    case SampleCost::kChaseLoads: return read_chase_case(*this, c);
    case SampleCost::kSmallCopies: return small_copy_case(*this, c, case_index);
    default: throw std::logic_error(std::string("not a latency method of a known sample: ") + to_string(c.method));
  }
}

bool agree_on_latency_skips(LatencyProbes& probes, const std::function<std::optional<std::string>()>& unsupported,
                            CaseOutcome& out, bool needs_peer) {
  if (const auto& why = probes.buffers().no_peer_reason(); why && needs_peer) {  // the same on every rank
    out.status = CaseStatus::kSkipped;
    out.error = *why;
    return false;
  }
  if (!unsupported) return true;
  auto agreed = probes.steps().run_reports("agreeing on skips", [&](StepReport& r) { r.skip = unsupported(); });
  return !any_skipped(agreed, out) && !any_failed(agreed, out);
}

}  // namespace p2pbench
