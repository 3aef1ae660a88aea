// latency_read: one thread chases a chain of dependent loads through the peer's memory.
// CaseSpec::read_chase selects the variant: p2pbench's own method (defaults) or one of
// nvbandwidth's choices (docs/latency-read-vs-nvbandwidth.md says which and why). Every sample
// records both timings, the in-kernel timer and CUDA events around whole launches, and the SM
// each launch chased from; `timing` only picks which of the two is the row's latency_us.
#include <algorithm>
#include <map>

#include "kernels/gate_kernels.hpp"
#include "kernels/latency_kernels.hpp"
#include "measure/latency_runner.hpp"
#include "measure/transfer_timer.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

namespace {


// An upper bound on one remote load (the H200 pair: ~0.85 us), for the owner's spin deadline.
constexpr double kSlowestLoadS = 5e-6;

kernels::ChaseLoad chase_load_of(const std::string& load) {
  if (load == "absolute") return kernels::ChaseLoad::kAbsolute;
  if (load == "generic") return kernels::ChaseLoad::kGeneric;
  if (load == "plain") return kernels::ChaseLoad::kWeak;
  return kernels::ChaseLoad::kStrong;
}

int current_sm_count() {
  int device = 0;
  int sms = 0;
  cuda_check(cudaGetDevice(&device), "querying the current device");
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "querying the SM count");
  return sms;
}

// The owner's spin (owner "busy") ends however the case ends: GateRelease stores the ticket
// into the shared gate word the spin kernel polls (ticket 0 for owner "idle": nothing to end).

// Where the chase ran: each SM's median ns per load and its launches over the samples (every_sm:
// one launch per SM per sample), in SM order.
void record_sms(const std::map<unsigned, std::vector<double>>& by_sm, ReadChaseSamples& s) {
  for (const auto& [sm, ns] : by_sm) {
    s.sm_ids.push_back(sm);
    s.per_sm_ns_per_load.push_back(quantile(ns, 0.5));
    s.per_sm_launches.push_back(ns.size());
  }
}

}  // namespace

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ChaseSample, loads, kernel_ns_per_load, event_ns_per_load, cycles_per_load,
                                                us_at_peak_clock, launch_sm, launch_ns_per_load)

// Reader only: one sample = one launch ("single") or one launch per SM ("every_sm", launch k's
// block k chases, as nvbandwidth), each bracketed by CUDA events and synchronised before the
// next (as nvbandwidth does), each chase's end checked.
void LatencyRunner::chase_sample(const CaseSpec& c, const ReadChase& r, int grid_blocks, StepReport& report,
                                 ChaseSample& sample) const {
  auto* result = static_cast<kernels::ChaseResult*>(result_.host());
  const uint64_t expected_end = kernels::expected_chase_end(c.bytes, r.stride_bytes, r.loads);
  const int launches = r.launch == "every_sm" ? grid_blocks : 1;
  double kernel_ns = 0;
  double event_ms = 0;
  double cycles = 0;
  for (int k = 0; k < launches; ++k) {
    *result = {};
    cuda_check(cudaEventRecord(start_.get(), stream_.get()), "recording the start of a pointer-chase launch");
    kernels::enqueue_pointer_chase(buffers_.peer_src(c.src_rank()), c.bytes, r.stride_bytes, r.loads,
                                   static_cast<kernels::ChaseResult*>(result_.device()), stream_.get(),
                                   chase_load_of(r.load), {unsigned(launches == 1 ? 1 : grid_blocks), unsigned(k)});
    sync("a pointer chase");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "reading a pointer-chase launch's event time");
    if (result->final_offset != expected_end || result->loads != r.loads || result->chaser_block != unsigned(k)) {
      report.verify_error = "verification failed: launch " + std::to_string(k) + " (block " +
                            std::to_string(result->chaser_block) + ", " + std::to_string(result->loads) +
                            " loads) ended at offset " + std::to_string(result->final_offset) +
                            ", expected block " + std::to_string(k) + ", " + std::to_string(r.loads) + " loads, offset " +
                            std::to_string(expected_end);
      return;
    }
    kernel_ns += double(result->elapsed_ns);
    event_ms += double(ms);
    cycles += double(result->elapsed_cycles);
    sample.launch_sm.push_back(result->smid);
    sample.launch_ns_per_load.push_back(double(result->elapsed_ns) / double(r.loads));
  }
  const double loads = double(r.loads) * launches;
  sample.loads = r.loads * uint64_t(launches);
  sample.kernel_ns_per_load = kernel_ns / loads;
  sample.event_ns_per_load = event_ms * 1e6 / loads;
  sample.cycles_per_load = cycles / loads;
  sample.us_at_peak_clock = cycles / loads / peak_sm_clock_mhz_;  // the reader's GPU
}

// The memory's owner (src) builds a chain of offsets, which mean the same in every process; for
// "absolute" and "generic" the reader (dst) writes its own mapping's addresses instead. With a
// busy owner, the owner's spin starts behind `ticket` (see below).
bool LatencyRunner::build_chain(const CaseSpec& c, const ReadChase& r, int grid, uint32_t ticket, CaseOutcome& out) {
  const int me = comm_.rank();
  const bool absolute = r.load == "absolute" || r.load == "generic";
  const bool busy_owner = r.owner == "busy";
  auto* stamps = static_cast<kernels::GateStamps*>(stamps_.host());
  auto built = steps_.run_reports("building the pointer chain", [&](StepReport&) {
    if (auto why = kernels::chase_unsupported_reason(c.bytes, r.stride_bytes)) throw InputError(*why);
    if (!absolute && me == c.src_rank()) kernels::build_chase_chain(buffers_.local_src(), c.bytes, r.stride_bytes, stream_.get());
    if (absolute && me == c.dst_rank())
      kernels::build_chase_chain(buffers_.peer_src(c.src_rank()), c.bytes, r.stride_bytes, stream_.get(), buffers_.peer_src(c.src_rank()));
    sync("building the pointer chain");
    if (busy_owner && me == c.src_rank()) {
      // One thread spins on the owner's GPU (it polls a host word, no traffic on the link) from
      // before the warm-up until the last sample, so that GPU is not idle while it is read.
      const double case_s = double(options_.samples + 1) * grid * double(r.loads) * kSlowestLoadS + options_.gate_timeout_s;
      *stamps = {};
      kernels::enqueue_gate_wait(gate_.device_word(), ticket, uint64_t(case_s * options_.timeout_scale * 1e9),
                                 gate_.heartbeat_word(), static_cast<kernels::GateStamps*>(stamps_.device()), stream_.get());
    }
  });
  return !any_failed(built, out);
}

// The owner's spin has been released: it must end, and must not have timed out before.
bool LatencyRunner::end_owner_spin(const CaseSpec& c, const ReadChase& r, CaseOutcome& out) {
  const auto* stamps = static_cast<const kernels::GateStamps*>(stamps_.host());
  auto ended = steps_.run_reports("ending the owner's spin", [&](StepReport&) {
    if (r.owner != "busy" || comm_.rank() != c.src_rank()) return;
    sync("the owner's spin");
    if (stamps->timed_out)
      throw std::runtime_error("the owner's spin kernel reached its deadline before the chase ended: "
                               "the owner's GPU was not kept busy throughout");
  });
  return !any_failed(ended, out);
}

void LatencyRunner::run_read(const CaseSpec& c, CaseOutcome& out) {
  const int me = comm_.rank();
  const ReadChase r = c.read_chase.value_or(ReadChase{});
  const int grid = r.launch == "every_sm" ? current_sm_count() : 1;
  const uint32_t ticket = r.owner == "busy" ? gate_.next_ticket() : 0;  // every rank, in the same order
  GateRelease spin_release(gate_, ticket);
  if (!build_chain(c, r, grid, ticket, out)) return;

  ReadChaseSamples chase;
  chase.grid_blocks = grid;
  std::map<unsigned, std::vector<double>> by_sm;  // ns per load of each SM's launches
  // One sample's chase may be long (read_loads up to 1e7 on every SM): its bound grows with it.
  const double sample_bound_s = grid * double(r.loads) * kSlowestLoadS + LockStep::kDefaultLocalWorkS;
  for (int s = 0; s <= options_.samples; ++s) {  // sample 0 warms up (TLB misses); recorded apart
    auto chased = steps_.run<ChaseSample>("chasing pointers", [&](StepReport& report, ChaseSample& sample) {
      if (me == c.dst_rank()) chase_sample(c, r, grid, report, sample);
    }, sample_bound_s);
    const auto chased_reports = reports_of(chased);
    if (any_failed(chased_reports, out) || any_verify_failed(chased_reports, out)) return;
    const ChaseSample& reader = chased[size_t(c.dst_rank())].data;
    out.iterations = reader.loads;
    if (s == 0) {
      chase.warmup_kernel_timer_us = reader.kernel_ns_per_load * 1e-3;
      chase.warmup_events_us = reader.event_ns_per_load * 1e-3;
      continue;
    }
    chase.kernel_timer_us.push_back(reader.kernel_ns_per_load * 1e-3);
    chase.events_us.push_back(reader.event_ns_per_load * 1e-3);
    out.cycles.push_back(reader.cycles_per_load);
    out.latency_at_peak_clock_us.push_back(reader.us_at_peak_clock);
    for (size_t k = 0; k < reader.launch_sm.size(); ++k) by_sm[reader.launch_sm[k]].push_back(reader.launch_ns_per_load[k]);
  }
  out.latency_us = r.timing == "events" ? chase.events_us : chase.kernel_timer_us;

  spin_release.now();
  if (!end_owner_spin(c, r, out)) return;
  if (chase.kernel_timer_us.empty()) return;
  chase.reader_sm_clock_mhz = quantile(out.cycles, 0.5) / (quantile(chase.kernel_timer_us, 0.5) * 1e3) * 1e3;
  record_sms(by_sm, chase);
  out.read_chase = std::move(chase);
}

}  // namespace p2pbench
