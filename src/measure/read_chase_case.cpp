// latency_read: one thread chases a chain of dependent loads through the peer's memory;
// latency_host: the same chase through a chain in pinned host memory of the reader's own (cases
// r -> r; nvbandwidth's host_device_latency_sm builds its chain there).
// CaseSpec::read_chase selects the variant: p2pbench's own method (defaults) or one of
// nvbandwidth's choices (docs/latency-read-vs-nvbandwidth.md says which and why). Every sample
// records both timings, the in-kernel timer and CUDA events around whole launches, and the SM
// each launch chased from; `timing` only picks which of the two is the row's latency_us.
#include <algorithm>
#include <map>

#include "common/cuda_check.hpp"
#include "kernels/gate_kernels.hpp"
#include "kernels/latency_kernels.hpp"
#include "measure/latency_probes.hpp"
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

// Where the chase ran: each SM's median ns per load and its launches over the samples (every_sm:
// one launch per SM per sample), in SM order.
void record_sms(const std::map<unsigned, std::vector<double>>& by_sm, ReadChaseSamples& s) {
  for (const auto& [sm, ns] : by_sm) {
    s.sm_ids.push_back(sm);
    s.per_sm_ns_per_load.push_back(quantile(ns, 0.5));
    s.per_sm_launches.push_back(ns.size());
  }
}

// The reader's figures of one sample, per load over all its launches, and the SM each launch
// chased from.
struct ChaseSample {
  uint64_t loads = 0;
  double kernel_ns_per_load = 0;  // the in-kernel timer
  double event_ns_per_load = 0;   // CUDA events around each launch
  double cycles_per_load = 0;
  double us_at_peak_clock = 0;    // cycles at the reader GPU's peak SM clock
  std::vector<unsigned> launch_sm;         // per launch
  std::vector<double> launch_ns_per_load;  // per launch, in-kernel timer
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ChaseSample, loads, kernel_ns_per_load, event_ns_per_load, cycles_per_load,
                                                us_at_peak_clock, launch_sm, launch_ns_per_load)

class ReadChaseCase final : public CaseProcedure {
 public:
  ReadChaseCase(LatencyProbes& probes, const CaseSpec& c)
      : p_(probes), c_(c), r_(c.read_chase.value_or(ReadChase{})), in_host_(runs_on_own_gpu(c.method)) {}

  bool agree_on_skips(CaseOutcome& out) override;
  bool prepare(CaseOutcome& out) override;
  // Sample -1 warms up (TLB misses); its figures are recorded apart.
  int warmup_samples() const override { return 1; }
  bool always_checks() const override { return true; }
  bool sample(int index, CaseOutcome& out) override;
  bool finish(CaseOutcome& out) override;

 private:
  // One sample on the reader; a chain that ends where it should not sets report.verify_error.
  void chase(StepReport& report, ChaseSample& sample) const;
  bool end_owner_spin(CaseOutcome& out);
  // Where the reader chases: the owner's memory through its mapping, or the host chain.
  void* chain() const { return in_host_ ? host_chain_->device() : p_.buffers().peer_src(c_.src_rank()); }

  LatencyProbes& p_;
  CaseSpec c_;
  ReadChase r_;
  bool in_host_;                               // latency_host
  std::optional<MappedHostBuffer> host_chain_;  // latency_host: the chain, pinned and mapped
  int grid_ = 1;
  // The owner's spin (owner "busy") ends however the case ends: releasing its ticket stores it
  // into the gate word the spin kernel polls (ticket 0, owner "idle": nothing to end).
  std::optional<GateRelease> spin_release_;
  ReadChaseSamples figures_;
  std::map<unsigned, std::vector<double>> by_sm_;  // ns per load of each SM's launches
};

// latency_host has no peer: the host owns its chain, so no owner spins beside the chase.
bool ReadChaseCase::agree_on_skips(CaseOutcome& out) {
  if (!in_host_) return agree_on_latency_skips(p_, {}, out);
  return agree_on_latency_skips(p_, [&]() -> std::optional<std::string> {
    if (r_.owner == "busy") return "latency_host: the host owns the chain, no GPU to keep busy (read_owner busy is latency_read's)";
    return std::nullopt;
  }, out, /*needs_peer=*/false);
}

// Reader only: one sample = one launch ("single") or one launch per SM ("every_sm", launch k's
// block k chases, as nvbandwidth), each bracketed by CUDA events and synchronised before the
// next (as nvbandwidth does), each chase's end checked.
void ReadChaseCase::chase(StepReport& report, ChaseSample& sample) const {
  auto* result = static_cast<kernels::ChaseResult*>(p_.result_host());
  const uint64_t expected_end = kernels::expected_chase_end(c_.bytes, r_.stride_bytes, r_.loads);
  const int launches = r_.launch == "every_sm" ? grid_ : 1;
  double kernel_ns = 0, event_ms = 0, cycles = 0;
  for (int k = 0; k < launches; ++k) {
    *result = {};
    cuda_check(cudaEventRecord(p_.start(), p_.stream()), "recording the start of a pointer-chase launch");
    kernels::enqueue_pointer_chase(chain(), c_.bytes, r_.stride_bytes, r_.loads,
                                   static_cast<kernels::ChaseResult*>(p_.result_device()), p_.stream(), chase_load_of(r_.load),
                                   {unsigned(launches == 1 ? 1 : grid_), unsigned(k)});
    p_.sync("a pointer chase");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, p_.start(), p_.stop()), "reading a pointer-chase launch's event time");
    if (result->final_offset != expected_end || result->loads != r_.loads || result->chaser_block != unsigned(k)) {
      report.verify_error = "verification failed: launch " + std::to_string(k) + " (block " +
                            std::to_string(result->chaser_block) + ", " + std::to_string(result->loads) +
                            " loads) ended at offset " + std::to_string(result->final_offset) + ", expected block " +
                            std::to_string(k) + ", " + std::to_string(r_.loads) + " loads, offset " + std::to_string(expected_end);
      return;
    }
    kernel_ns += double(result->elapsed_ns);
    event_ms += double(ms);
    cycles += double(result->elapsed_cycles);
    sample.launch_sm.push_back(result->smid);
    sample.launch_ns_per_load.push_back(double(result->elapsed_ns) / double(r_.loads));
  }
  const double loads = double(r_.loads) * launches;
  sample.loads = r_.loads * uint64_t(launches);
  sample.kernel_ns_per_load = kernel_ns / loads;
  sample.event_ns_per_load = event_ms * 1e6 / loads;
  sample.cycles_per_load = cycles / loads;
  sample.us_at_peak_clock = cycles / loads / p_.peak_sm_clock_mhz();  // the reader's GPU
}

// The memory's owner (src) builds a chain of offsets, which mean the same in every process; for
// "absolute" and "generic" the reader (dst) writes its own mapping's addresses instead. With a
// busy owner, one thread spins on the owner's GPU (it polls a host word, no traffic on the
// link) from before the warm-up until the last sample, so that GPU is not idle while it is read.
bool ReadChaseCase::prepare(CaseOutcome& out) {
  const int me = p_.rank();
  grid_ = r_.launch == "every_sm" ? sm_count(current_device()) : 1;
  const uint32_t ticket = r_.owner == "busy" ? p_.gate().next_ticket() : 0;  // every rank, in the same order
  spin_release_.emplace(p_.gate(), ticket);
  const bool absolute = r_.load == "absolute" || r_.load == "generic";
  auto built = p_.steps().run_reports("building the pointer chain", [&](StepReport&) {
    if (auto why = kernels::chase_unsupported_reason(c_.bytes, r_.stride_bytes)) throw InputError(*why);
    if (in_host_ && me == c_.dst_rank()) host_chain_.emplace(c_.bytes, "the host pointer chain");
    if (!absolute && me == c_.src_rank())  // by the owner (host: the reader, whose host memory it is)
      kernels::build_chase_chain(in_host_ ? chain() : p_.buffers().local_src(), c_.bytes, r_.stride_bytes, p_.stream());
    if (absolute && me == c_.dst_rank()) kernels::build_chase_chain(chain(), c_.bytes, r_.stride_bytes, p_.stream(), chain());
    p_.sync("building the pointer chain");
    if (r_.owner != "busy" || me != c_.src_rank()) return;
    const double case_s = double(p_.options().samples + 1) * grid_ * double(r_.loads) * kSlowestLoadS + p_.options().gate_timeout_s;
    *static_cast<kernels::GateStamps*>(p_.stamps_host()) = {};
    kernels::enqueue_gate_wait(p_.gate().device_word(), ticket, uint64_t(case_s * p_.options().timeout_scale * 1e9),
                               p_.gate().heartbeat_word(), static_cast<kernels::GateStamps*>(p_.stamps_device()), p_.stream());
  });
  return !any_failed(built, out);
}

bool ReadChaseCase::sample(int index, CaseOutcome& out) {
  // One sample's chase may be long (read_loads up to 1e7 on every SM): its bound grows with it.
  const double bound_s = grid_ * double(r_.loads) * kSlowestLoadS + LockStep::kDefaultLocalWorkS;
  auto chased = p_.steps().run<ChaseSample>("chasing pointers", [&](StepReport& report, ChaseSample& sample) {
    if (p_.rank() == c_.dst_rank()) chase(report, sample);
  }, bound_s);
  const auto reports = reports_of(chased);
  if (any_failed(reports, out) || any_verify_failed(reports, out)) return false;
  const ChaseSample& reader = chased[size_t(c_.dst_rank())].data;
  out.iterations = reader.loads;
  if (index < 0) {
    figures_.warmup_kernel_timer_us = reader.kernel_ns_per_load * 1e-3;
    figures_.warmup_events_us = reader.event_ns_per_load * 1e-3;
    return true;
  }
  figures_.kernel_timer_us.push_back(reader.kernel_ns_per_load * 1e-3);
  figures_.events_us.push_back(reader.event_ns_per_load * 1e-3);
  out.cycles.push_back(reader.cycles_per_load);
  out.latency_at_peak_clock_us.push_back(reader.us_at_peak_clock);
  for (size_t k = 0; k < reader.launch_sm.size(); ++k) by_sm_[reader.launch_sm[k]].push_back(reader.launch_ns_per_load[k]);
  return true;
}

// The owner's spin has been released: it must end, and must not have timed out before.
bool ReadChaseCase::end_owner_spin(CaseOutcome& out) {
  spin_release_->now();
  const auto* stamps = static_cast<const kernels::GateStamps*>(p_.stamps_host());
  auto ended = p_.steps().run_reports("ending the owner's spin", [&](StepReport&) {
    if (r_.owner != "busy" || p_.rank() != c_.src_rank()) return;
    p_.sync("the owner's spin");
    if (stamps->timed_out)
      throw std::runtime_error("the owner's spin kernel reached its deadline before the chase ended: "
                               "the owner's GPU was not kept busy throughout");
  });
  return !any_failed(ended, out);
}

bool ReadChaseCase::finish(CaseOutcome& out) {
  out.latency_us = r_.timing == "events" ? figures_.events_us : figures_.kernel_timer_us;
  if (!end_owner_spin(out)) return false;
  if (figures_.kernel_timer_us.empty()) return true;
  figures_.grid_blocks = grid_;
  figures_.reader_sm_clock_mhz = quantile(out.cycles, 0.5) / (quantile(figures_.kernel_timer_us, 0.5) * 1e3) * 1e3;
  record_sms(by_sm_, figures_);
  out.read_chase = std::move(figures_);
  return true;
}

}  // namespace

std::unique_ptr<CaseProcedure> read_chase_case(LatencyProbes& probes, const CaseSpec& c) {
  return std::make_unique<ReadChaseCase>(probes, c);
}

}  // namespace p2pbench
