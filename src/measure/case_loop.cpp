#include "measure/case_loop.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/cuda_check.hpp"
#include "common/event_wait.hpp"
#include "kernels/fault_kernels.hpp"
#include "measure/case_procedure.hpp"
#include "measure/lock_step.hpp"
#include "measure/source_seed.hpp"
#include "plan/device_memory.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {

namespace {

uint64_t seed_of_sample(uint64_t case_index, int sample) { return (case_index << 20) ^ uint64_t(sample) ^ 0x5eed5eedull; }

std::string member_name(int m) { return "rank " + std::to_string(m); }

// Every lane of every member's report that carried `flow`, with the member that ran it.
std::vector<std::pair<int, const LaneTiming*>> lanes_of(const std::vector<StepReport>& reports, const Flow& flow) {
  std::vector<std::pair<int, const LaneTiming*>> out;
  for (size_t m = 0; m < reports.size(); ++m)
    for (const LaneTiming& lane : reports[m].lanes)
      if (std::find(lane.flows.begin(), lane.flows.end(), flow) != lane.flows.end()) out.emplace_back(int(m), &lane);
  return out;
}

}  // namespace

CaseLoop::CaseLoop(CaseGroup& group, const RunnerOptions& options, const CaseSpec& c, uint64_t case_index,
                   const EngineFactory& make_engine)
    : group_(group), options_(options), case_(c), case_index_(case_index) {
  for (int id : group_.local_members()) {
    Member m;
    m.id = id;
    m.engine = make_engine(c);
    if (m.engine) plan_member(m);
    members_.push_back(std::move(m));
  }
  const bool rotates = !members_.empty() && members_.front().engine && members_.front().engine->rotates_buffers();
  layout_ = BufferLayout::for_case(c.bytes, rotates ? options_.buffer_pool_bytes : 0);
}

CaseLoop::~CaseLoop() {
  for (const Member& m : members_)
    for (const Lane& lane : m.lanes) group_.timer(m.id, lane.timer).release_graph();
}

// The member's roles: the flows it drives (one-sided: push the source, pull the destination;
// two-sided: both ends), grouped into lanes, and the buffers it fills or checks.
void CaseLoop::plan_member(Member& m) {
  const TransferEngine& engine = *m.engine;
  std::vector<Flow> driven;
  for (const Flow& f : case_.flows) {
    const bool involved = f.src_rank == m.id || f.dst_rank == m.id;
    if (involved) m.involved.push_back(f);
    const bool drives = engine.two_sided() ? involved : CaseSpec::engine_rank(case_.direction, f.src_rank, f.dst_rank) == m.id;
    if (drives) driven.push_back(f);
    m.fills_source = m.fills_source || f.src_rank == m.id;
    if (f.dst_rank == m.id) m.incoming.push_back(f);
  }
  if (driven.empty()) return;
  if (engine.fuses_flows()) {
    m.lanes.push_back({driven, 0});
    return;
  }
  for (size_t i = 0; i < driven.size(); ++i) m.lanes.push_back({{driven[i]}, i});
}

// A flow's slot in its destination's buffer: its index among the case's flows into that rank.
int CaseLoop::slot_of(const Flow& f) const {
  const auto at = std::find(case_.flows.begin(), case_.flows.end(), f);
  return int(destination_slot(case_, size_t(at - case_.flows.begin())));
}

Endpoints CaseLoop::endpoints(const Member& m, const Flow& f) {
  std::optional<HostBufferRequest> host;
  if (m.engine->needs_host_buffer())
    host = HostBufferRequest{group_.slot_bytes(), case_.host_memory.value_or(HostMemoryKind::kPinned),
                             case_.host_numa.value_or(NumaPlacement::kLocal)};
  Endpoints e = group_.endpoints(m.id, f, slot_of(f), host);
  e.heartbeat = group_.heartbeat_word();
  return e;
}

void CaseLoop::enqueue(Member& m, const Lane& lane, uint64_t index, cudaStream_t stream) {
  const uint64_t offset = (index % layout_.slots) * layout_.stride;
  delay_if_slowed(lane, stream);
  std::vector<Transfer> transfers;
  for (const Flow& f : lane.flows) {
    transfers.push_back(m.engine->transfer(case_.direction, endpoints(m, f), offset, size_t(case_.bytes)));
    transfers.back().index = index;
  }
  if (transfers.size() == 1)
    m.engine->launch(transfers.front(), stream);
  else
    m.engine->launch_fused(transfers, stream);
}

// Calibration runs before single_ms_ is known (0): it measures the flow's own time, undelayed.
void CaseLoop::delay_if_slowed(const Lane& lane, cudaStream_t stream) const {
  const auto& slow = options_.slow_flow;
  if (!slow || single_ms_ <= 0 || std::find(lane.flows.begin(), lane.flows.end(), slow->flow) == lane.flows.end()) return;
  kernels::enqueue_delay(uint64_t((slow->factor - 1.0) * single_ms_ * 1e6), stream);
}

// One step of the group: `local` runs for this process's member `id`.
std::vector<StepReport> CaseLoop::step(const char* what, const std::function<void(Member&, StepReport&)>& local,
                                       double local_work_s) {
  return group_.step(what, [&](int id, StepReport& r) {
    for (Member& m : members_)
      if (m.id == id) local(m, r);
  }, local_work_s);
}

// A sample's length as calibrated: the slowest member's single transfer times the count.
double CaseLoop::sample_ms() const {
  return std::max(single_ms_, 1e-6) * double(std::max<uint64_t>(iterations_, 1));
}

bool CaseLoop::agree_on_skips(CaseOutcome& out) {
  for (const Member& m : members_)
    if (!m.engine) {
      out.status = CaseStatus::kSkipped;
      out.error = std::string("method ") + to_string(case_.method) + " is not available in this build";
      return false;
    }
  const auto reports = step("agreeing on skips", [&](Member& m, StepReport& r) {
    r.skip = static_skip_reason(case_);
    for (const Flow& f : m.involved)
      if (!r.skip && needs_peer_mapping(case_.method) && f.src_rank != f.dst_rank) r.skip = group_.no_path_reason(f);
    if (!r.skip && !m.lanes.empty()) r.skip = m.engine->unsupported_reason(group_.device(m.id));
    if (!r.skip && !m.lanes.empty() && m.engine->needs_host_buffer()) r.skip = host_placement_skip(m);
  }, LockStep::kDefaultLocalWorkS);
  return !any_skipped(reports, out) && !any_failed(reports, out);
}

// Where the host has no node for the case's NUMA placement (remote on a host of one node), for
// every engine with a host buffer.
std::optional<std::string> CaseLoop::host_placement_skip(const Member& m) const {
  const DevicePlacement where = host_placement_for(group_.device(m.id), case_.host_numa.value_or(NumaPlacement::kLocal));
  if (where.placement) return std::nullopt;
  return where.skip;
}

void CaseLoop::fill_and_poison(Member& m, uint64_t sample_seed, bool poison) {
  const cudaStream_t stream = group_.timer(m.id, 0).stream();
  for (const Flow& f : m.involved) m.engine->before_sample(endpoints(m, f), source_seed(sample_seed, f.src_rank), stream);
  if (m.fills_source) {
    const Flow& f = *std::find_if(case_.flows.begin(), case_.flows.end(), [&](const Flow& x) { return x.src_rank == m.id; });
    m.engine->fill_source(m.engine->source_region(endpoints(m, f)), layout_.footprint(), source_seed(sample_seed, m.id), stream);
  }
  if (poison)
    for (const Flow& f : m.incoming)
      m.engine->poison_destination(m.engine->destination_region(endpoints(m, f)), layout_.footprint(),
                                   source_seed(sample_seed, f.src_rank), stream);
  wait_for_stream(stream, kLocalWorkWaitS, "the filling and poisoning of the buffers");
}

void CaseLoop::fill_for_calibration(Member& m) {
  cuda_check(cudaDeviceSynchronize(), "finishing earlier work");
  fill_and_poison(m, seed_of_sample(case_index_, 0), false);
  if (!m.lanes.empty()) m.engine->prepare(group_.device(m.id), m.id, m.involved);
}

void CaseLoop::calibrate(Member& m, StepReport& r) {
  if (m.lanes.empty()) return;
  const Lane& first = m.lanes.front();
  for (const Lane& lane : m.lanes) {
    TransferTimer& timer = group_.timer(m.id, lane.timer);
    // for this case's calibration, graphs and samples
    timer.set_feeding(m.engine->feeding(), m.engine->queued_commands());
    const double ms = timer.time_single_ms([&](uint64_t i, cudaStream_t s) { enqueue(m, lane, i, s); });
    r.single_ms = std::max(r.single_ms, ms);
  }
  // A wait of a two-sided engine that gave up makes the calibrated time its timeout: say so now.
  if (auto why = m.engine->stalled()) throw std::runtime_error("calibrating: " + *why);
  // After the timed launches: NCCL reads its grid from a capture, which must not connect its peers.
  const Transfer t0 = m.engine->transfer(case_.direction, endpoints(m, first.flows[0]), 0, size_t(case_.bytes));
  r.sms_used = m.engine->measure_sms_used(t0, group_.timer(m.id, first.timer).stream());
  r.iterations = TransferTimer::iterations_for(r.single_ms, options_.min_sample_time_ms);
  r.engine_mode = m.engine->engine_mode();
  if (const HostMemory* h = endpoints(m, first.flows[0]).host_memory) {  // what the host gave the buffer
    r.host_numa_node = h->numa_node();
    r.host_pages = h->pages();
  }
}

bool CaseLoop::prepare(CaseOutcome& out, const std::function<uint64_t(uint64_t)>& choose_iterations) {
  // Calibration is ungated, so every member resets its buffers (a two-sided engine's flag
  // words too) in a step of its own: a reset after a faster peer's first signal would erase
  // it, and both ends would wait until their timeouts (seen: three ranks on one GPU).
  auto filled = step("filling the buffers", [&](Member& m, StepReport&) { fill_for_calibration(m); },
                     LockStep::kDefaultLocalWorkS);
  if (any_failed(filled, out)) return false;
  auto calibration = step("calibrating the case", [&](Member& m, StepReport& r) { calibrate(m, r); },
                          (TransferTimer::kCalibrationLaunches + 2) * TransferTimer::kUngatedWaitS);
  if (any_failed(calibration, out)) return false;
  for (const StepReport& r : calibration) {  // the slowest member's: every member counts the same
    single_ms_ = std::max(single_ms_, r.single_ms);
    iterations_ = std::max(iterations_, r.iterations);
    if (r.sms_used) out.sms_used = std::max(out.sms_used.value_or(0), *r.sms_used);
    if (r.engine_mode) out.engine_mode = r.engine_mode;
    if (r.host_pages) {
      out.host_pages = r.host_pages;
      out.host_numa_node = r.host_numa_node;
    }
  }
  if (choose_iterations) iterations_ = choose_iterations(iterations_);
  for (Member& m : members_) iterations_ = m.engine->usable_iterations(iterations_);
  for (Member& m : members_) m.engine->set_iterations(iterations_);
  out.iterations = iterations_;
  out.buffer_pool_bytes = layout_.slots > 1 ? layout_.footprint() : 0;

  // Capture each lane's sample and warm up (a launch count every member shares).
  const uint64_t launches = TransferTimer::warmup_launches_for(single_ms_, iterations_, options_.warmup_time_ms);
  auto warmup = step("warming up", [&](Member& m, StepReport&) {
    for (const Lane& lane : m.lanes) {
      TransferTimer& timer = group_.timer(m.id, lane.timer);
      timer.build([&](uint64_t i, cudaStream_t s) { enqueue(m, lane, i, s); }, iterations_);
      timer.warm_up_launches(launches);
    }
  }, TransferTimer::kUngatedWaitS + 2e-3 * options_.warmup_time_ms);
  return !any_failed(warmup, out);
}

bool CaseLoop::run_gated(int index, CaseOutcome& out, bool fill, bool stamped, std::vector<StepReport>& finished) {
  seed_ = seed_of_sample(case_index_, index + 1);
  auto prepared = step("preparing a sample", [&](Member& m, StepReport&) {
    if (options_.verify && fill) fill_and_poison(m, seed_, true);
  }, LockStep::kDefaultLocalWorkS);
  if (any_failed(prepared, out)) return false;

  const double gate_timeout_s = options_.gate_timeout_s * options_.timeout_scale;
  const double deadline_s = gate_timeout_s + (1e-3 * options_.min_sample_time_ms * 100 + 10.0) * options_.timeout_scale;
  const std::string what = (stamped ? "the per-transfer timing sample" : "sample " + std::to_string(index)) + " of " + case_.name();
  const uint32_t ticket = group_.next_ticket();
  std::map<int, bool> queued;
  std::vector<StepReport> queue;
  try {
    queue = step("queueing a sample behind the gate", [&](Member& m, StepReport&) {
      const TransferTimer::Beside beside = [&](cudaStream_t s, cudaEvent_t end) { m.engine->enqueue_beside(s, end); };
      for (const Lane& lane : m.lanes) {  // the member's work beside its samples starts with its first lane
        group_.timer(m.id, lane.timer).enqueue_gated(group_.gate_word(m.id), group_.heartbeat_word(), ticket,
                                                     gate_timeout_s, stamped, queued[m.id] ? nullptr : beside);
        queued[m.id] = true;
      }
    }, LockStep::kDefaultLocalWorkS);
  } catch (...) {
    group_.release(ticket);
    throw;
  }
  group_.release(ticket);

  finished = step("finishing a sample", [&](Member& m, StepReport& r) {
    if (!queued[m.id]) return;
    for (const Lane& lane : m.lanes) {
      TransferTimer& timer = group_.timer(m.id, lane.timer);
      const auto s = timer.wait(deadline_s, what);
      r.lanes.push_back({lane.flows, s.elapsed_ms, s.window_ns, m.engine->two_sided(), false, s.release_ns, s.end_ns, {}});
      if (stamped) r.lanes.back().transfer_ms = timer.transfer_times_ms();
    }
    if (auto why = m.engine->stalled()) throw std::runtime_error(*why);
  }, deadline_s / options_.timeout_scale);
  return !any_failed(queue, out) && !any_failed(finished, out);
}

bool CaseLoop::sample(int index, CaseOutcome& out, bool fill) {
  std::vector<StepReport> finished;
  if (!run_gated(index, out, fill, false, finished)) return false;
  record(finished, out);
  return true;
}

bool CaseLoop::stamped_sample(CaseOutcome& out) {
  auto built = step("capturing the per-transfer timing sample", [&](Member& m, StepReport&) {
    for (const Lane& lane : m.lanes)
      group_.timer(m.id, lane.timer).build_stamped([&](uint64_t i, cudaStream_t s) { enqueue(m, lane, i, s); },
                                                   iterations_);
  }, LockStep::kDefaultLocalWorkS);
  if (any_failed(built, out)) return false;
  // Its own seed (index past any sample's), so the check sees this sample's bytes.
  const int index = (1 << 19) - 2;
  std::vector<StepReport> finished;
  if (!run_gated(index, out, true, true, finished)) return false;
  if (!verify(index, out)) return false;
  record_transfer_times(finished, out);
  return true;
}

bool CaseLoop::verify(int index, CaseOutcome& out) {
  if (!options_.verify) return true;
  const uint64_t slots_used = std::min<uint64_t>(layout_.slots, iterations_);
  auto verified = step("verifying a sample", [&](Member& m, StepReport& r) {
    const cudaStream_t stream = group_.timer(m.id, 0).stream();
    for (const Flow& f : m.incoming) {
      char* dst = static_cast<char*>(m.engine->destination_region(endpoints(m, f)));
      for (uint64_t k = 0; k < slots_used && !r.verify_error; ++k)
        if (auto bad = m.engine->verify(dst + k * layout_.stride, case_.bytes, source_seed(seed_, f.src_rank),
                                        k * layout_.stride, stream))
          r.verify_error = "verification failed on " + member_name(m.id) + " (data from " + member_name(f.src_rank) +
                           ", sample " + std::to_string(index) + ", slot " + std::to_string(k) + "): " + *bad;
    }
  }, LockStep::kDefaultLocalWorkS);
  return !any_failed(verified, out) && !any_verify_failed(verified, out);
}

bool CaseLoop::start_background(double seconds, CaseOutcome& out) {
  background_launches_ = std::max<uint64_t>(1, uint64_t(std::ceil(seconds * 1e3 / sample_ms())));
  seed_ = seed_of_sample(case_index_, 0);  // calibrate() filled the sources with it
  if (options_.verify) {  // in a step of its own, as before calibrating
    auto filled = step("filling the buffers", [&](Member& m, StepReport&) { fill_and_poison(m, seed_, true); },
                       LockStep::kDefaultLocalWorkS);
    if (any_failed(filled, out)) return false;
  }
  auto started = step("starting the load", [&](Member& m, StepReport&) {
    for (const Lane& lane : m.lanes) group_.timer(m.id, lane.timer).start_run(background_launches_);
  }, LockStep::kDefaultLocalWorkS);
  return !any_failed(started, out);
}

bool CaseLoop::finish_background(CaseOutcome& out, bool& covered) {
  const double bound_s = 10.0 + 1e-3 * sample_ms() * double(background_launches_) * 4;
  auto finished = step("finishing the load", [&](Member& m, StepReport& r) {
    for (const Lane& lane : m.lanes) {
      TransferTimer& timer = group_.timer(m.id, lane.timer);
      // Still running now: the load lasted past everything measured beside it.
      const bool still_running = timer.running();
      const double ms = timer.finish_run(bound_s * options_.timeout_scale, "the load beside " + case_.name());
      r.lanes.push_back({lane.flows, ms, 0.0, m.engine->two_sided(), still_running, 0.0, 0.0, {}});
    }
  }, bound_s);
  if (any_failed(finished, out)) return false;
  covered = true;
  const double launches = double(iterations_) * double(background_launches_);
  name_flows(out);
  double longest_ms = 0, all_bytes = 0;
  for (FlowSamples& fs : out.flows) {
    const auto lanes = lanes_of(finished, fs.flow);
    if (lanes.empty()) continue;
    const LaneTiming& lane = *lanes.front().second;
    covered = covered && lane.still_running;
    fs.gbps.push_back(double(fs.bytes) * launches / (lane.elapsed_ms * 1e-3) / 1e9);
    all_bytes += double(fs.bytes) * launches;
    longest_ms = std::max(longest_ms, lane.elapsed_ms);
  }
  if (longest_ms > 0) out.gbps.push_back(all_bytes / (longest_ms * 1e-3) / 1e9);
  out.iterations = iterations_ * background_launches_;
  return true;
}

void CaseLoop::name_flows(CaseOutcome& out) const {
  if (out.flows.empty())
    for (const Flow& f : case_.flows) out.flows.push_back(FlowSamples::named(f, flow_bytes(f)));
}

uint64_t CaseLoop::flow_bytes(const Flow& f) const {
  const TransferEngine* engine = members_.empty() ? nullptr : members_.front().engine.get();
  return engine ? engine->bytes_moved(f, case_.bytes) : case_.bytes;
}

// Per flow: one-sided lanes give CUDA-event figures; two-sided flows end when the later end's
// window does. Several flows: all bytes over the union of their windows (every window opens at
// the gate's release, one host store every GPU sees within about a microsecond; each window is
// measured by its own GPU's timer, so the timers' offsets do not enter).
// Members that share a GPU are processes that take turns on it: a lane may see the gate open
// only when its process gets the GPU, so its own events and window would leave out the time it
// waited. There every lane's window runs from the first release any lane of that GPU saw (one
// timer per GPU: absolute stamps compare), and the flow's figure comes from that window.
void CaseLoop::record(const std::vector<StepReport>& reports, CaseOutcome& out) const {
  std::map<std::string, double> first_release;
  std::map<std::string, std::set<size_t>> members_on;
  for (size_t m = 0; m < reports.size(); ++m)
    for (const LaneTiming& lane : reports[m].lanes) {
      const std::string gpu = group_.gpu_of(int(m));
      const auto it = first_release.find(gpu);
      first_release[gpu] = it == first_release.end() ? lane.release_ns : std::min(it->second, lane.release_ns);
      members_on[gpu].insert(m);
    }
  name_flows(out);
  double union_ns = 0, shortest_ns = 0, all_bytes = 0;
  for (FlowSamples& fs : out.flows) {
    double elapsed_ms = 0, window_ns = 0;
    bool from_window = false;
    for (const auto& [m, lane] : lanes_of(reports, fs.flow)) {
      const std::string gpu = group_.gpu_of(m);
      const bool shared = members_on[gpu].size() > 1;
      elapsed_ms = std::max(elapsed_ms, lane->elapsed_ms);
      window_ns = std::max(window_ns, shared ? lane->end_ns - first_release[gpu] : lane->window_ns);
      from_window = from_window || lane->two_sided || shared;
    }
    const double seconds = from_window ? window_ns * 1e-9 : elapsed_ms * 1e-3;
    const double moved = double(fs.bytes) * double(iterations_);
    fs.gbps.push_back(moved / seconds / 1e9);
    all_bytes += moved;
    fs.time_us.push_back(seconds * 1e6 / double(iterations_));
    fs.window_ns.push_back(window_ns);
    union_ns = std::max(union_ns, window_ns);
    shortest_ns = shortest_ns == 0 ? window_ns : std::min(shortest_ns, window_ns);
  }
  if (out.flows.size() == 1) {
    out.gbps.push_back(out.flows[0].gbps.back());
    out.time_us.push_back(out.flows[0].time_us.back());
    return;
  }
  out.gbps.push_back(all_bytes / (union_ns * 1e-9) / 1e9);
  out.time_us.push_back(union_ns * 1e-3 / double(iterations_));
  out.overlap.push_back(union_ns > 0 ? shortest_ns / union_ns : 0.0);
}

// Per flow: each transfer's time, the latest of the lanes that carried it (a two-sided flow's
// transfer ends when its later end's does); the case's: per transfer, the slowest flow's.
void CaseLoop::record_transfer_times(const std::vector<StepReport>& reports, CaseOutcome& out) const {
  // Raises into[i] to scale * values[i], growing `into` as needed.
  auto raise_to = [](std::vector<double>& into, const std::vector<double>& values, double scale) {
    if (into.size() < values.size()) into.resize(values.size(), 0.0);
    for (size_t i = 0; i < values.size(); ++i) into[i] = std::max(into[i], values[i] * scale);
  };
  name_flows(out);
  out.transfer_us.clear();
  for (FlowSamples& fs : out.flows) {
    fs.transfer_us.clear();
    for (const auto& [m, lane] : lanes_of(reports, fs.flow)) raise_to(fs.transfer_us, lane->transfer_ms, 1e3);
    raise_to(out.transfer_us, fs.transfer_us, 1.0);
  }
}

namespace {

// A sample recorded and then refused by verification is not a figure.
void drop_last_sample(CaseOutcome& out) {
  out.gbps.pop_back();
  out.time_us.pop_back();
  if (out.overlap.size() > out.gbps.size()) out.overlap.pop_back();
  for (FlowSamples& f : out.flows) {
    f.gbps.pop_back();
    f.time_us.pop_back();
    f.window_ns.pop_back();
  }
}

// The copy methods' steps of the one case loop: the loop's own, verification after each sample.
class CopyProcedure final : public CaseProcedure {
 public:
  CopyProcedure(CaseGroup& group, const RunnerOptions& options, const CaseSpec& c, uint64_t case_index,
                const EngineFactory& make_engine)
      : loop_(group, options, c, case_index, make_engine) {}
  bool agree_on_skips(CaseOutcome& out) override { return loop_.agree_on_skips(out); }
  bool prepare(CaseOutcome& out) override { return loop_.prepare(out); }
  bool finish(CaseOutcome& out) override { return loop_.stamped_sample(out); }
  double sample_seconds() const override { return loop_.sample_ms() * 1e-3; }
  bool sample(int index, CaseOutcome& out) override {
    const size_t recorded = out.gbps.size();
    if (loop_.sample(index, out) && loop_.verify(index, out)) return true;
    if (out.gbps.size() > recorded) drop_last_sample(out);
    return false;
  }

 private:
  CaseLoop loop_;
};

}  // namespace

std::unique_ptr<CaseProcedure> copy_procedure(CaseGroup& group, const RunnerOptions& options, const CaseSpec& c,
                                              uint64_t case_index, const EngineFactory& make_engine) {
  return std::make_unique<CopyProcedure>(group, options, c, case_index, make_engine);
}

CaseOutcome run_case(CaseGroup& group, const RunnerOptions& options, const CaseSpec& c, uint64_t case_index,
                     const EngineFactory& make_engine) {
  CopyProcedure copy(group, options, c, case_index, make_engine);
  return run_procedure(copy, options.samples, options.verify);
}

}  // namespace p2pbench
