#include "measure/latency_runner.hpp"

#include <algorithm>
#include <chrono>

#include "kernels/gate_kernels.hpp"
#include "kernels/latency_kernels.hpp"
#include "kernels/pattern_kernels.hpp"
#include "measure/transfer_timer.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

namespace {

constexpr size_t kResultBytes = 256;  // room for any of the kernels' result structs

// What each rank of a ping-pong reports after a sample (the initiator's figures are the row's).
struct PingPongTiming {
  double elapsed_ns = 0;
  double round_trips = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PingPongTiming, elapsed_ns, round_trips)

// What the sender of latency_ce reports after a sample of small copies.
struct SmallCopyTiming {
  double end_to_end_us = 0;  // median issue -> completion of one copy, on the host clock
  double interval_us = 0;    // per copy when queued back to back, on CUDA events
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SmallCopyTiming, end_to_end_us, interval_us)

}  // namespace

LatencyRunner::LatencyRunner(const Communicator& comm, const RunnerOptions& options, SharedGate& gate,
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

int LatencyRunner::peer_of(const CaseSpec& c) const {
  return comm_.rank() == c.src_rank() ? c.dst_rank() : c.src_rank();
}

void LatencyRunner::sync(const std::string& what) const {
  cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording an event after " + what);
  wait_for_event(stop_.get(), (options_.gate_timeout_s + 30.0) * options_.timeout_scale, what);
}

CaseOutcome LatencyRunner::run(const CaseSpec& c, uint64_t case_index) {
  CaseOutcome out;
  if (const auto& why = buffers_.no_peer_reason()) {  // the same on every rank
    out.status = CaseStatus::kSkipped;
    out.error = *why;
    return out;
  }
  switch (c.method) {
    case Method::kLatencySignal: run_signal(c, case_index, out); break;
    case Method::kLatencyRead: run_read(c, out); break;  // latency_read.cpp
    case Method::kLatencyCe: run_copy(c, case_index, out); break;
    default: out.status = CaseStatus::kSkipped; out.error = "not a latency method"; break;
  }
  out.verified = out.status == CaseStatus::kOk && !out.latency_us.empty();
  return out;
}

kernels::PingPongArgs LatencyRunner::ping_pong_args(const CaseSpec& c, uint64_t case_index) const {
  const int me = comm_.rank();
  const bool in_pair = me == c.src_rank() || me == c.dst_rank();
  kernels::PingPongArgs args;
  args.my_inbox = buffers_.local_dst();  // polled here, written by the peer
  args.peer_inbox = in_pair ? buffers_.peer_dst(peer_of(c)) : nullptr;
  args.payload_bytes = c.bytes;
  args.round_trips = uint32_t(options_.latency.round_trips);
  args.initiator = me == c.src_rank();
  args.flag_in_data = c.protocol.value_or("flag_in_data") == "flag_in_data";
  args.seed = case_index * 7919 + 17;
  args.timeout_ns = uint64_t(options_.gate_timeout_s * options_.timeout_scale * 1e9);
  args.heartbeat = gate_.heartbeat_word();
  args.result = static_cast<kernels::PingPongResult*>(result_.device());
  return args;
}

void LatencyRunner::run_signal(const CaseSpec& c, uint64_t case_index, CaseOutcome& out) {
  const int me = comm_.rank();
  kernels::PingPongArgs args = ping_pong_args(c, case_index);
  const bool flag_in_data = args.flag_in_data;
  const size_t inbox_bytes = kernels::ping_pong_inbox_bytes(c.bytes, flag_in_data);
  const uint32_t round_trips = args.round_trips;
  const double gate_timeout_s = options_.gate_timeout_s * options_.timeout_scale;
  // Only the pair's two ranks take part; the others keep step with them.
  const bool in_pair = me == c.src_rank() || me == c.dst_rank();
  out.iterations = round_trips;

  auto prepared = steps_.run_reports("preparing a ping-pong", [&](StepReport& r) {
    if (!in_pair) return;
    r.skip = kernels::ping_pong_unsupported_reason(args);
    kernels::ping_pong_reset_inbox(buffers_.local_dst(), inbox_bytes, stream_.get());
    kernels::ping_pong_prepare(c.bytes, flag_in_data);
    sync("resetting the inbox");
  });
  if (any_skipped(prepared, out) || any_failed(prepared, out)) return;

  // Launch 0 warms up (module load, TLB); each later launch is one sample. Both sides start
  // at the gate, with the same epoch, so their sequence numbers never collide.
  for (int s = 0; s <= options_.samples; ++s) {
    args.epoch = uint32_t(s);
    const uint32_t ticket = gate_.next_ticket();
    GateRelease opens(gate_, ticket);
    auto* result = static_cast<kernels::PingPongResult*>(result_.host());
    auto queued = steps_.run_reports("queueing a ping-pong", [&](StepReport&) {
      if (!in_pair) return;
      *result = {};
      kernels::enqueue_gate_wait(gate_.device_word(), ticket, uint64_t(gate_timeout_s * 1e9), gate_.heartbeat_word(),
                                 static_cast<kernels::GateStamps*>(stamps_.device()), stream_.get());
      kernels::enqueue_ping_pong(args, stream_.get());
    });
    opens.now();  // the node leader opens it
    auto finished = steps_.run<PingPongTiming>("finishing a ping-pong", [&](StepReport& r, PingPongTiming& t) {
      if (!in_pair) return;
      sync("a ping-pong of " + c.name());
      if (result->timed_out)
        throw std::runtime_error("the ping-pong between rank " + std::to_string(c.src_rank()) + " and rank " +
                                 std::to_string(c.dst_rank()) + " timed out after " + std::to_string(result->round_trips_done) +
                                 " of " + std::to_string(round_trips) + " round trips");
      if (result->bad_payloads)
        r.verify_error = "verification failed: " + std::to_string(result->bad_payloads) + " payloads arrived wrong on rank " +
                         std::to_string(me) + " (first in round " + std::to_string(result->first_bad_round) + ")";
      t = {double(result->elapsed_ns), double(result->round_trips_done)};
    });
    const auto finished_reports = reports_of(finished);
    if (any_failed(queued, out) || any_failed(finished_reports, out) || any_verify_failed(finished_reports, out)) return;
    if (s == 0) continue;
    const PingPongTiming& initiator = finished[size_t(c.src_rank())].data;
    out.latency_us.push_back(initiator.elapsed_ns / initiator.round_trips / 2.0 * 1e-3);
  }
}

void LatencyRunner::run_copy(const CaseSpec& c, uint64_t case_index, CaseOutcome& out) {
  const int me = comm_.rank();
  const uint64_t copies = options_.latency.ce_copies;
  out.iterations = copies;
  for (int s = 0; s <= options_.samples; ++s) {  // sample 0 warms up
    const uint64_t seed = case_index * 1000003 + uint64_t(s);
    auto prepared = steps_.run_reports("preparing copies", [&](StepReport&) {
      if (me == c.src_rank()) kernels::fill_pattern(buffers_.local_src(), c.bytes, seed, 0, stream_.get());
      if (me == c.dst_rank()) kernels::fill_poison(buffers_.local_dst(), c.bytes, seed, 0, stream_.get());
      sync("filling and poisoning");
    });
    if (any_failed(prepared, out)) return;
    auto copied = steps_.run<SmallCopyTiming>("timing small copies", [&](StepReport&, SmallCopyTiming& t) {
      if (me != c.src_rank()) return;
      // Issue -> completion, one copy at a time, on the host clock.
      std::vector<double> end_to_end;
      for (uint64_t k = 0; k < copies; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        cuda_check(cudaMemcpyAsync(buffers_.peer_dst(c.dst_rank()), buffers_.local_src(), c.bytes, cudaMemcpyDefault, stream_.get()),
                   "enqueuing a small copy to the peer");
        cuda_check(cudaStreamSynchronize(stream_.get()), "waiting for a small copy");
        end_to_end.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      // Back-to-back: the same copies queued without waiting, timed by events.
      cuda_check(cudaEventRecord(start_.get(), stream_.get()), "recording the issue-interval start");
      for (uint64_t k = 0; k < copies; ++k)
        cuda_check(cudaMemcpyAsync(buffers_.peer_dst(c.dst_rank()), buffers_.local_src(), c.bytes, cudaMemcpyDefault, stream_.get()),
                   "enqueuing back-to-back copies");
      sync("back-to-back copies");
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "reading the issue-interval time");
      t = {quantile(end_to_end, 0.5), double(ms) * 1e3 / double(copies)};
    });
    if (any_failed(reports_of(copied), out)) return;
    auto verified = steps_.run_reports("verifying small copies", [&](StepReport& report) {
      if (me != c.dst_rank()) return;
      MappedHostBuffer check(sizeof(kernels::PatternCheck), "a verification result");
      auto* r = static_cast<kernels::PatternCheck*>(check.host());
      *r = {0, ~0ull};
      kernels::check_pattern(buffers_.local_dst(), c.bytes, seed, 0, static_cast<kernels::PatternCheck*>(check.device()),
                             stream_.get());
      sync("verifying small copies");
      if (r->mismatches)
        report.verify_error = "verification failed on rank " + std::to_string(me) + ": " + std::to_string(r->mismatches) +
                              " bytes differ; first bad offset " + std::to_string(r->first_bad_offset);
    });
    if (any_failed(verified, out) || any_verify_failed(verified, out)) return;
    if (s == 0) continue;
    const SmallCopyTiming& sender = copied[size_t(c.src_rank())].data;
    out.latency_us.push_back(sender.end_to_end_us);
    out.issue_interval_us.push_back(sender.interval_us);
  }
}

}  // namespace p2pbench
