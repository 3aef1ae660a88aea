#include "measure/interference_cases.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "common/errors.hpp"
#include "common/event_wait.hpp"

#include "device/green_context.hpp"
#include "measure/interference_phase.hpp"
#include "measure/source_seed.hpp"
#include "measure/transfer_timer.hpp"
#include "plan/device_memory.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kWorkloadAhead = 2;         // workload launches queued ahead: the window ends at most 2 launches late
constexpr double kPlannedCover = 1.25;    // a busy GPU that drives no transfer plans this much of the transfer's window

uint64_t seed_of(uint64_t case_index, int sample) { return (case_index << 20) ^ uint64_t(sample) ^ 0x1f7e2f3eull; }

uint64_t launches_for(double single_ms, double sample_ms) {
  return uint64_t(std::clamp(std::ceil(sample_ms / std::max(single_ms, 1e-4)), 1.0, double(kInterferenceMaxLaunches)));
}

// One launch of each, ungated, on this rank (0: it ran none): the case's sizes derive from them.
struct Calibration {
  double workload_single_ms = 0;            // on the whole GPU
  double partition_workload_single_ms = 0;  // in the workload's SM group (partitioned cases)
  double transfer_single_ms = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Calibration, workload_single_ms, partition_workload_single_ms,
                                                transfer_single_ms)

// The longest of each over the ranks, 0.1 us at least.
Calibration slowest(const std::vector<RankStep<Calibration>>& ranks) {
  Calibration c{1e-4, 1e-4, 1e-4};
  for (const auto& r : ranks) {
    c.workload_single_ms = std::max(c.workload_single_ms, r.data.workload_single_ms);
    c.partition_workload_single_ms = std::max(c.partition_workload_single_ms, r.data.partition_workload_single_ms);
    c.transfer_single_ms = std::max(c.transfer_single_ms, r.data.transfer_single_ms);
  }
  return c;
}

// The workload as a GPU that ran it describes it (every rank learns it).
struct WorkloadDescription {
  bool ran = false;
  std::string unit, description;
  double work_per_launch = 0;  // TFLOP or GB
  int transfer_group_sms = 0;  // partitioned cases: the SM groups (0: unpartitioned)
  int workload_group_sms = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WorkloadDescription, ran, unit, description, work_per_launch,
                                                transfer_group_sms, workload_group_sms)

std::vector<PhaseFigures> figures_of(const std::vector<RankStep<PhaseFigures>>& ranks) {
  std::vector<PhaseFigures> figures;
  for (const auto& r : ranks) figures.push_back(r.data);
  return figures;
}

// Waits, within the deadline, for the work queued on each of `streams` (of green contexts too:
// one by one, not by a device-wide synchronize).
void wait_for_streams(const std::vector<cudaStream_t>& streams, double deadline_s, const char* what) {
  for (cudaStream_t s : streams) wait_for_stream(s, deadline_s, what);
}

}  // namespace

struct InterferenceCases::Case {
  CaseSpec spec, transfer_spec;
  std::unique_ptr<TransferEngine> engine;
  // This rank's buffers: the source it fills (where it sends: one pattern whoever it sends to),
  // and each flow it receives, whose destination it poisons and checks.
  std::optional<Endpoints> sending;
  std::vector<Endpoints> receiving;
  // The flows whose end this rank runs: those it drives (one-sided engines), or every flow it
  // takes part in where both ends run (put with signal: the receiver waits for the sender).
  std::vector<Flow> mine;
  // Each of those ends, with a stream of its own: two ends of one rank (a sender and the other
  // flow's receiver) must run beside each other, not one behind the other. An engine that fuses
  // flows (NCCL: one group of sends and receives) runs them as one end, one launch on one stream.
  struct End {
    std::vector<Endpoints> flows;
    cudaStream_t stream = nullptr;
  };
  std::vector<End> runs;
  // drive: this rank drives a flow (push: its source, pull: its destination); its GPU runs the workload.
  bool drive = false, busy = false;
  std::unique_ptr<GreenPartition> partition;
  cudaStream_t transfer_stream = nullptr, workload_stream = nullptr, full_stream = nullptr;
  Workload* workload = nullptr;
  uint64_t transfer_launches = 0, workload_launches = 0, partition_workload_launches = 0;
  // Of a phase's transfer_launches, those queued behind the closed gate (what the launch queue
  // holds); the rest are queued once the gate opened.
  uint64_t transfer_ahead = 0;
  double transfer_sample_ms = 0;
  // How long (from the gate) to keep the workload going for transfers this GPU cannot see: a
  // GPU that drives none plans 1.25x the longest transfer window seen; with bidir, each GPU
  // also covers the other direction's transfer, as long as the longest window of the last sample.
  double planned_cover_ms = 0;
  double work_per_launch = 0;  // the workload's, learnt by every rank (TFLOP or GB per launch)
  double deadline_s = 0;

  // The workload's next launches go to its SM group (the whole GPU where unpartitioned), or to
  // the whole GPU.
  void target_workload_group() const { workload->set_sm_target(partition ? partition->split().workload_sms : 0, workload_stream); }
  void target_whole_gpu() const { workload->set_sm_target(0, full_stream); }

  std::vector<Transfer> transfers_of(const End& end) const {
    std::vector<Transfer> transfers;
    for (const Endpoints& e : end.flows) transfers.push_back(engine->transfer(spec.direction, e, 0, size_t(spec.bytes)));
    return transfers;
  }
  void launch(const End& end, cudaStream_t stream) const { engine->launch_fused(transfers_of(end), stream); }
  // Each end's state (signals, credits) back to its start, with the pattern each flow's source
  // writes in the sample of `sample_seed`.
  void reset_ends(uint64_t sample_seed, cudaStream_t stream) const {
    for (const End& end : runs)
      for (const Endpoints& e : end.flows) engine->before_sample(e, source_seed(sample_seed, e.flow.src_rank), stream);
  }
  // What one transfer carries over the links, every flow of it (a collective: a chunk each way
  // between every pair of its ranks), by which the transfer's GB/s count.
  uint64_t bytes_moved() const {
    uint64_t bytes = 0;
    for (const Flow& f : flows_of(spec)) bytes += engine->bytes_moved(f, spec.bytes);
    return bytes;
  }
  std::vector<cudaStream_t> end_streams() const {
    std::vector<cudaStream_t> streams;
    for (const End& end : runs) streams.push_back(end.stream);
    return streams;
  }
  // `count` transfers of each end this rank runs, each on its end's stream.
  void enqueue_transfers(uint64_t count) const {
    for (const End& end : runs)
      for (uint64_t i = 0; i < count; ++i) launch(end, end.stream);
  }
  // A phase's transfers behind the opened window's closed gate: all of them, and the window
  // closes, or the first transfer_ahead. Returns the transfers left for after the gate opened.
  uint64_t queue_transfers(GatedWindows& w) const {
    if (w.empty()) return 0;
    enqueue_transfers(transfer_ahead);
    if (transfer_ahead == transfer_launches) w.close();
    return transfer_launches - transfer_ahead;
  }
  // One of the transfers left, queued once the gate opened; the window closes after the last.
  void top_up_transfers(GatedWindows& w, uint64_t& left) const {
    if (left == 0) return;
    enqueue_transfers(1);
    if (--left == 0) w.close();
  }
};

InterferenceCases::InterferenceCases(const Communicator& comm, const RunnerOptions& options,
                                       const InterferenceSettings& settings, int device, SharedGate& gate, CaseGroup& group,
                                       EngineFactory make_engine)
    : comm_(comm),
      steps_(comm, options.watchdog, options.faults),
      options_(options),
      settings_(settings),
      device_(device),
      gate_(gate),
      group_(group),
      make_engine_(std::move(make_engine)),
      transfer_stream_(make_stream("interference transfers", settings.transfer_high_priority)),
      second_transfer_stream_(make_stream("a second end of interference transfers", settings.transfer_high_priority)),
      workload_stream_(make_stream("the interference workload")),
      aux_stream_(make_stream("interference fills and checks")) {}

InterferenceCases::~InterferenceCases() = default;

Workload& InterferenceCases::workload(const std::string& name) {
  auto& w = workloads_[name];
  if (!w) w = make_workload(name, settings_, device_);
  if (!w) throw InputError("interference.workloads", "\"" + name + "\"", "unknown workload");
  return *w;
}

bool InterferenceCases::agree_on_skips(Case& k, CaseOutcome& out) {
  const int me = comm_.rank();
  const bool both_ends = k.engine && k.engine->two_sided();
  bool takes_part = false;
  for (const Flow& o : flows_of(k.spec)) {
    const bool drives = CaseSpec::engine_rank(k.spec.direction, o.src_rank, o.dst_rank) == me;
    const bool involved = o.src_rank == me || o.dst_rank == me;
    if (both_ends ? involved : drives) k.mine.push_back(o);
    k.drive = k.drive || drives;
    takes_part = takes_part || involved;
  }
  k.busy = k.drive || (k.spec.both_gpus_busy.value_or(false) && takes_part);
  const int sms = k.spec.sm_partition.value_or(0);
  auto skips = steps_.run_reports("agreeing on skips", [&](StepReport& r) {
    std::optional<std::string>& reason = r.skip;
    reason = static_skip_reason(k.transfer_spec);
    if (!reason && !k.engine) reason = "engine " + std::string(to_string(*k.spec.engine)) + " cannot run beside a workload";
    for (const Flow& f : flows_of(k.spec))
      if (!reason) reason = group_.no_path_reason(f);
    if (!reason && !k.mine.empty()) reason = k.engine->unsupported_reason(device_);
    if (!reason && sms > 0 && !takes_sms(*k.spec.engine))
      reason = std::string("the ") + method_info(*k.spec.engine).title + " takes no SMs: it runs unpartitioned only";
    if (!reason && sms > 0 && (k.drive || k.busy)) {
      std::string why_not;
      k.partition = GreenPartition::create(device_, sms, why_not);
      if (!k.partition) reason = why_not;
    }
  });
  return !any_skipped(skips, out) && !any_failed(skips, out);
}

Endpoints InterferenceCases::endpoints_for(const CaseSpec& c, const Flow& flow) {
  const std::vector<Flow>& flows = c.flows;
  const auto index = size_t(std::find(flows.begin(), flows.end(), flow) - flows.begin());
  if (index == flows.size()) throw std::logic_error("an interference case asked for the ends of a flow it does not have");
  Endpoints e = group_.endpoints(comm_.rank(), flow, int(destination_slot(c, index)), std::nullopt);
  e.heartbeat = gate_.heartbeat_word();
  return e;
}

// The case's streams and this rank's ends; then, in a step of its own, the source filled and
// each end's state reset (signals, credits): a reset after a faster peer's first signal would
// erase it, and both ends would wait until their timeouts.
bool InterferenceCases::place_ends(Case& k, CaseOutcome& out) {
  k.transfer_stream = k.partition ? k.partition->transfer_stream() : transfer_stream_.get();
  k.workload_stream = k.partition ? k.partition->workload_stream() : workload_stream_.get();
  k.full_stream = workload_stream_.get();
  for (const Flow& f : flows_of(k.spec)) {
    if (f.src_rank == comm_.rank() && !k.sending) k.sending = endpoints_for(k.spec, f);
    if (f.dst_rank == comm_.rank()) k.receiving.push_back(endpoints_for(k.spec, f));
  }
  const cudaStream_t second = k.partition ? k.partition->second_transfer_stream() : second_transfer_stream_.get();
  if (k.mine.size() > 2 && !k.engine->fuses_flows())
    throw std::logic_error("an interference case gives a rank at most two ends of a transfer its engine does not fuse");
  for (size_t i = 0; i < k.mine.size(); ++i) {
    if (i > 0 && k.engine->fuses_flows()) k.runs.front().flows.push_back(endpoints_for(k.spec, k.mine[i]));
    else k.runs.push_back({{endpoints_for(k.spec, k.mine[i])}, i == 0 ? k.transfer_stream : second});
  }
  auto filled = steps_.run_reports("filling the buffers", [&](StepReport&) {
    cuda_check(cudaDeviceSynchronize(), "finishing earlier work");
    k.reset_ends(seed_of(0, 0), aux_stream_.get());
    if (k.sending)
      k.engine->fill_source(k.engine->source_region(*k.sending), size_t(k.spec.bytes), source_seed(seed_of(0, 0), comm_.rank()),
                            aux_stream_.get());
    wait_for_stream(aux_stream_.get(), kLocalWorkWaitS, "the filling of the source");
  });
  return !any_failed(filled, out);
}

// One transfer of each end, timed on the first end's stream; the other end's transfers run
// beside them, as many, so that both ends of every flow meet. The SMs a transfer takes are
// measured after them: NCCL reads its grid from a capture, which must not connect its peers.
void InterferenceCases::time_transfer(Case& k, StepReport& r, double& single_ms, double deadline_s) {
  k.engine->prepare(device_, comm_.rank(), k.mine);
  for (size_t i = 1; i < k.runs.size(); ++i)
    for (int n = 0; n < kSingleTimings; ++n) k.launch(k.runs[i], k.runs[i].stream);
  const Case::End& first = k.runs.front();
  single_ms = time_single_ms(first.stream, [&](cudaStream_t s) { k.launch(first, s); }, deadline_s);
  wait_for_streams(k.end_streams(), deadline_s, "calibrating the transfer's ends");
  if (auto why = k.engine->stalled()) throw RuntimeFailure("calibrating: " + *why);
  for (const Case::End& end : k.runs)
    if (const auto sms = k.engine->measure_sms_used(k.transfers_of(end).front(), end.stream))
      r.sms_used = std::max(r.sms_used.value_or(0), *sms);
}

bool InterferenceCases::calibrate(Case& k, CaseOutcome& out) {
  if (!place_ends(k, out)) return false;
  const double launch_deadline_s = 60.0 * options_.timeout_scale;
  auto calibration = steps_.run<Calibration>("calibrating the case", [&](StepReport& r, Calibration& d) {
    if (k.busy) {
      k.workload = &workload(*k.spec.workload);
      const auto launch = [&](cudaStream_t s) { k.workload->enqueue(s); };
      k.workload->set_sm_target(0, k.full_stream);
      d.workload_single_ms = time_single_ms(k.full_stream, launch, launch_deadline_s);
      if (k.partition) {
        k.workload->set_sm_target(k.partition->split().workload_sms, k.workload_stream);
        d.partition_workload_single_ms = time_single_ms(k.workload_stream, launch, launch_deadline_s);
      }
    }
    if (!k.runs.empty()) time_transfer(k, r, d.transfer_single_ms, launch_deadline_s);
  });
  if (any_failed(reports_of(calibration), out)) return false;
  const Calibration single = slowest(calibration);
  // Behind the closed gate a phase queues at most as many commands as kInterferenceMaxLaunches
  // single launches (the copy-engine put with signal queues up to 256 per transfer); the rest
  // follow once it opened.
  const uint64_t most = std::max<uint64_t>(1, kInterferenceMaxLaunches / std::max<uint64_t>(1, k.engine->queued_commands()));
  k.transfer_launches = launches_for(single.transfer_single_ms, options_.min_sample_time_ms);
  k.transfer_ahead = std::min(most, k.transfer_launches);
  k.transfer_sample_ms = single.transfer_single_ms * double(k.transfer_launches);
  k.workload_launches = launches_for(single.workload_single_ms, k.transfer_sample_ms);
  k.partition_workload_launches = launches_for(single.partition_workload_single_ms, k.transfer_sample_ms);
  k.planned_cover_ms = k.drive ? (k.spec.mode == Mode::kBidir ? k.transfer_sample_ms : 0.0) : kPlannedCover * k.transfer_sample_ms;
  k.deadline_s = options_.gate_timeout_s * options_.timeout_scale + (k.transfer_sample_ms * 20e-3 + 10.0) * options_.timeout_scale;
  out.iterations = k.transfer_launches;
  for (const auto& r : calibration)
    if (r.report.sms_used) out.sms_used = std::max(out.sms_used.value_or(0), *r.report.sms_used);
  return warm_up(k, out);
}

// One sample's worth of each, ungated, so clocks and caches settle.
bool InterferenceCases::warm_up(Case& k, CaseOutcome& out) {
  auto warmup = steps_.run_reports("warming up", [&](StepReport&) {
    k.enqueue_transfers(k.transfer_launches);
    if (k.busy) {
      k.target_workload_group();
      for (uint64_t i = 0; i < k.workload_launches; ++i) k.workload->enqueue(k.workload_stream);
    }
    // Streams of green contexts are waited for one by one (not by a device-wide synchronize).
    std::vector<cudaStream_t> streams = k.end_streams();
    streams.insert(streams.end(), {k.workload_stream, k.full_stream});
    wait_for_streams(streams, k.deadline_s, "warming up");
    if (auto why = k.engine->stalled()) throw RuntimeFailure("warming up: " + *why);
  });
  return !any_failed(warmup, out);
}

std::optional<std::vector<PhaseFigures>> InterferenceCases::gated_phase(const char* what,
                                                                         const std::function<void(uint32_t)>& queue,
                                                                         const std::function<void(PhaseFigures&)>& finish,
                                                                         CaseOutcome& out) {
  const uint32_t ticket = gate_.next_ticket();
  GateRelease opens(gate_, ticket);
  auto queued = steps_.run_reports(what, [&](StepReport&) { queue(ticket); });
  opens.now();
  auto finished = steps_.run<PhaseFigures>(what, [&](StepReport&, PhaseFigures& f) { finish(f); });
  if (any_failed(queued, out) || any_failed(reports_of(finished), out)) return std::nullopt;
  return figures_of(finished);
}

// Each source rank writes its own pattern, so bytes from the wrong peer fail the check; the ends'
// state is reset first (a collective's first poison of a sample comes after its reset; its
// receiving flows name one output, poisoned once).
bool InterferenceCases::fill_and_poison(Case& k, uint64_t seed, bool transfer, bool workload, CaseOutcome& out) {
  auto prepared = steps_.run_reports("preparing a sample", [&](StepReport&) {
    if (transfer) k.reset_ends(options_.verify ? seed : seed_of(0, 0), aux_stream_.get());
    if (transfer && options_.verify && k.sending)
      k.engine->fill_source(k.engine->source_region(*k.sending), size_t(k.spec.bytes), source_seed(seed, comm_.rank()),
                            aux_stream_.get());
    for (const Endpoints& e : k.receiving)
      if (transfer && options_.verify)
        k.engine->poison_destination(k.engine->destination_region(e), size_t(k.spec.bytes), source_seed(seed, e.flow.src_rank),
                                     aux_stream_.get());
    if (workload && k.busy) k.workload->poison_result(aux_stream_.get());
    wait_for_stream(aux_stream_.get(), kLocalWorkWaitS, "the filling and poisoning of the buffers");
  });
  return !any_failed(prepared, out);
}

// Only now, with every rank's work finished, may the destination be read.
bool InterferenceCases::verify(Case& k, int sample, uint64_t seed, bool transfer, bool workload, CaseOutcome& out) {
  auto verified = steps_.run_reports("verifying a sample", [&](StepReport& r) {
    const std::string where = " on rank " + std::to_string(comm_.rank()) + " (sample " + std::to_string(sample) + ")";
    // A wait of an end that gave up (put with signal) fails the sample: a stall is no figure.
    if (transfer && !k.runs.empty())
      if (auto why = k.engine->stalled()) throw RuntimeFailure(*why + where);
    if (workload && k.busy)
      if (auto bad = k.workload->check(aux_stream_.get())) r.verify_error = "workload check failed" + where + ": " + *bad;
    if (!transfer || !options_.verify) return;
    for (const Endpoints& e : k.receiving) {
      const uint64_t arriving = source_seed(seed, e.flow.src_rank);  // the sender's pattern arrives here
      if (auto bad = k.engine->verify(k.engine->destination_region(e), size_t(k.spec.bytes), arriving, 0, aux_stream_.get())) {
        r.verify_error = "transfer verification failed" + where + " (data from rank " + std::to_string(e.flow.src_rank) + "): " + *bad;
        return;
      }
    }
  });
  return !any_failed(verified, out) && !any_verify_failed(verified, out);
}

double InterferenceCases::gate_timeout_s() const { return options_.gate_timeout_s * options_.timeout_scale; }

// 1. The transfer alone (in its SM group where partitioned).
InterferenceCases::Phase InterferenceCases::transfer_alone(Case& k, GatedWindows& transfer, CaseOutcome& out) {
  uint64_t left = 0;
  return gated_phase("the transfer alone", [&](uint32_t ticket) {
    if (transfer.empty()) return;
    transfer.open(gate_.device_word(), gate_.heartbeat_word(), ticket, gate_timeout_s());
    left = k.queue_transfers(transfer);
  }, [&](PhaseFigures& d) {
    if (transfer.empty()) return;
    if (left) transfer.wait_open(k.deadline_s);
    while (left) k.top_up_transfers(transfer, left);
    d.set_transfer(transfer.wait(k.deadline_s));
  }, out);
}

// 2. The workload alone: `launches` of it on the whole GPU, or in its SM group.
InterferenceCases::Phase InterferenceCases::workload_alone(Case& k, GatedWindow& w, bool whole_gpu, uint64_t launches,
                                                             const char* what, CaseOutcome& out) {
  return gated_phase(what, [&](uint32_t ticket) {
    if (!k.busy) return;
    if (whole_gpu) k.target_whole_gpu();
    else k.target_workload_group();
    w.open(gate_.device_word(), gate_.heartbeat_word(), ticket, gate_timeout_s());
    for (uint64_t i = 0; i < launches; ++i) k.workload->enqueue(w.stream());
    w.close();
  }, [&](PhaseFigures& d) {
    if (!k.busy) return;
    d.workload = true;
    d.workload_ms = w.wait(k.deadline_s).elapsed_ms;
    d.workload_launches = double(launches);
  }, out);
}

// 3. Both at once behind the same gate; the workload keeps launching until the transfer's
// window has closed (a GPU that drives no transfer keeps it going for the planned time).
InterferenceCases::Phase InterferenceCases::together(Case& k, GatedWindows& transfer, GatedWindow& grouped, CaseOutcome& out) {
  WorkloadFeeder feeder(k.workload_stream, kWorkloadAhead, [&](cudaStream_t s) { k.workload->enqueue(s); });
  uint64_t left = 0;  // transfers queued between the workload's launches once the gate opened
  return gated_phase("the transfer beside the workload", [&](uint32_t ticket) {
    if (!transfer.empty()) {
      transfer.open(gate_.device_word(), gate_.heartbeat_word(), ticket, gate_timeout_s());
      left = k.queue_transfers(transfer);
    }
    if (k.busy) {
      k.target_workload_group();
      grouped.open(gate_.device_word(), gate_.heartbeat_word(), ticket, gate_timeout_s());
      feeder.prime();
    }
  }, [&](PhaseFigures& d) {
    if (left) transfer.wait_open(k.deadline_s);
    if (k.busy) {
      const auto t0 = Clock::now();
      const auto cover = [&] {
        k.top_up_transfers(transfer, left);
        if (!transfer.empty() && !transfer.closed_and_done()) return true;
        return std::chrono::duration<double, std::milli>(Clock::now() - t0).count() < k.planned_cover_ms;
      };
      feeder.feed_while(cover, k.deadline_s);
      grouped.close();
    }
    while (left) k.top_up_transfers(transfer, left);  // a GPU without the workload
    if (!transfer.empty()) d.set_transfer(transfer.wait(k.deadline_s));
    if (k.busy) {
      const WindowFigures f = grouped.wait(k.deadline_s);
      d.workload = true;
      d.workload_ms = f.elapsed_ms;
      d.workload_window_ns = f.window_ns;
      d.workload_launches = double(feeder.launches());
    }
  }, out);
}

bool InterferenceCases::run_sample(Case& k, int sample, uint64_t seed, CaseOutcome& out) {
  GatedWindows transfer(k.end_streams(), "transfer");
  GatedWindow alone(k.full_stream, "workload"), grouped(k.workload_stream, "workload");
  SampleFigures f;
  if (!fill_and_poison(k, seed, true, false, out) || !(f.transfer_alone = transfer_alone(k, transfer, out)) ||
      !verify(k, sample, seed, true, false, out))
    return false;
  // The workload's result is checked on the first sample only (a GEMM is the same each time).
  if (sample == 0 && !fill_and_poison(k, seed, false, true, out)) return false;
  if (!(f.workload_alone = workload_alone(k, alone, true, k.workload_launches, "the workload alone", out)) ||
      (sample == 0 && !verify(k, sample, seed, false, true, out)))
    return false;
  if (k.spec.sm_partition.value_or(0) > 0 &&
      !(f.workload_in_group = workload_alone(k, grouped, false, k.partition_workload_launches,
                                             "the workload alone in its SM group", out)))
    return false;
  if (!fill_and_poison(k, seed, true, true, out) || !(f.together = together(k, transfer, grouped, out)) ||
      !verify(k, sample, seed, true, true, out))
    return false;
  record_sample(k, f, out);
  return true;
}

void InterferenceCases::record_sample(Case& k, const SampleFigures& f, CaseOutcome& out) const {
  InterferenceSamples& rec = *out.interference;
  const double bytes = double(k.bytes_moved()) * double(k.transfer_launches);
  const bool bidir = k.spec.mode == Mode::kBidir;
  const bool one_flow_one_end = flows_of(k.spec).size() == 1 && !k.engine->two_sided();
  const double work = k.work_per_launch;  // from a GPU that ran the workload: every rank records the row
  rec.transfer_alone_gbps.push_back(transfer_gbps(*f.transfer_alone, bytes, one_flow_one_end));
  rec.workload_alone.push_back(workload_figure(*f.workload_alone, work));
  if (f.workload_in_group) rec.workload_partition_alone.push_back(workload_figure(*f.workload_in_group, work));
  rec.transfer_together_gbps.push_back(transfer_gbps(*f.together, bytes, one_flow_one_end));
  rec.workload_together.push_back(workload_figure(*f.together, work));
  rec.workload_launches_together.push_back(most_workload_launches(*f.together));
  rec.overlap.push_back(overlap_of(*f.together));
  const double longest_ms = longest_transfer_window_ns(*f.together) * 1e-6;
  if (!k.drive) k.planned_cover_ms = std::max(k.planned_cover_ms, kPlannedCover * longest_ms);
  else if (bidir) k.planned_cover_ms = longest_ms;
  out.gbps.push_back(rec.transfer_together_gbps.back());
  out.time_us.push_back(double(k.bytes_moved()) / (rec.transfer_together_gbps.back() * 1e9) * 1e6);
}

// The workload's unit and description, from a GPU that ran it (every rank learns them).
bool InterferenceCases::describe_workload(Case& k, CaseOutcome& out) {
  out.interference.emplace();
  InterferenceSamples& rec = *out.interference;
  auto described = steps_.run<WorkloadDescription>("describing the workload", [&](StepReport&, WorkloadDescription& d) {
    if (!k.busy) return;
    d = {true, k.workload->unit(), k.workload->describe(), k.workload->work_per_launch(), 0, 0};
    if (k.partition) {
      d.transfer_group_sms = k.partition->split().transfer_sms;
      d.workload_group_sms = k.partition->split().workload_sms;
    }
  });
  if (any_failed(reports_of(described), out)) return false;
  rec.workload_gpus = 0;
  for (const auto& [report, d] : described) {
    if (!d.ran) continue;
    ++rec.workload_gpus;
    rec.workload_unit = d.unit;
    rec.workload_description = d.description;
    k.work_per_launch = d.work_per_launch;
    if (d.transfer_group_sms > 0) {
      rec.transfer_group_sms = d.transfer_group_sms;
      rec.workload_group_sms = d.workload_group_sms;
    }
  }
  // An engine that reports its blocks (put with signal, the collectives of puts) runs on no more
  // SMs than its group holds, however many blocks it launches.
  if (rec.transfer_group_sms && out.sms_used) out.sms_used = std::min(*out.sms_used, *rec.transfer_group_sms);
  return true;
}

// One case: its roles and engine, the shared state's steps in the loop's order.
class InterferenceCase final : public CaseProcedure {
 public:
  InterferenceCase(InterferenceCases& cases, const CaseSpec& c, uint64_t case_index) : cases_(cases), case_index_(case_index) {
    k_.spec = c;
    k_.transfer_spec = transfer_case_of(c);
    k_.engine = cases.make_engine_(k_.transfer_spec);
  }
  bool agree_on_skips(CaseOutcome& out) override { return cases_.agree_on_skips(k_, out); }
  bool prepare(CaseOutcome& out) override { return cases_.calibrate(k_, out) && cases_.describe_workload(k_, out); }
  bool sample(int index, CaseOutcome& out) override {
    return cases_.run_sample(k_, index, seed_of(case_index_, index + 1), out);
  }

 private:
  InterferenceCases& cases_;
  uint64_t case_index_;
  InterferenceCases::Case k_;
};

std::unique_ptr<CaseProcedure> InterferenceCases::procedure_for(const CaseSpec& c, uint64_t case_index) {
  return std::make_unique<InterferenceCase>(*this, c, case_index);
}

}  // namespace p2pbench
