#include "plan/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "config/interference_config.hpp"
#include "plan/device_memory.hpp"
#include "plan/group_skip.hpp"
#include "plan/load_length.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {

namespace {

constexpr double kMaxWarmupLaunches = 10000;  // TransferTimer::warmup_launches_for's clamp

// One sample's transfer work and how many transfers it holds.
struct SampleWork {
  double seconds = 0;
  double transfers = 1;
};

// A sample of a fixed number of dependent steps (latency methods), whatever min_sample_time says.
bool fixed_steps(Method m) {
  const SampleCost cost = method_info(m).cost;
  return cost == SampleCost::kRoundTrips || cost == SampleCost::kChaseLoads || cost == SampleCost::kSmallCopies;
}

// Transfers repeat until a sample lasts min_sample_time (TransferTimer::iterations_for).
SampleWork transfer_sample(const Config& config, const CaseSpec& c, const GroupLayout& layout, const CaseCostModel& costs) {
  const double single = concurrent_transfer_seconds(c, layout, costs);
  const double iterations = std::max(1.0, std::ceil(config.min_sample_time_ms * 1e-3 / single));
  return {iterations * single, iterations};
}

// Bytes the busiest GPU receives in one transfer of the case (what it verifies per sample).
double busiest_received_bytes(const CaseSpec& c, const GroupLayout& layout) {
  std::map<std::string, double> into;
  double most = 0;
  for (const Flow& f : c.flows) most = std::max(most, into[layout.gpu_of_rank.at(size_t(f.dst_rank))] += double(c.bytes));
  return most;
}

// Verification reads every slot a sample wrote (slots of the pool, up to the iterations).
double verify_seconds(const Config& config, const CaseSpec& c, const GroupLayout& layout, double iterations,
                      const CaseCostModel& costs) {
  if (!config.verify || fixed_steps(c.method)) return 0;
  double slots = 1;
  if (const auto stride = buffer_slot_stride(c.bytes); stride && config.buffer_pool_bytes > *stride)
    slots = std::min(iterations, double(config.buffer_pool_bytes / *stride));
  const double per_gb = is_host_link(c.method) ? costs.host_verify_s_per_gb : costs.verify_s_per_gb;
  return per_gb * slots * busiest_received_bytes(c, layout) / 1e9;
}

// What a case of some method families costs beyond the model's common terms (CaseCostModel's
// fitted family costs): read from the case's own fields and its method's kind.
double family_seconds(const Config& config, const CaseSpec& c, const CaseCostModel& costs) {
  const double samples = config.samples;
  double seconds = 0;
  // A copy pattern's flows (a matrix case's two at most are in per_case_s; a collective's flows
  // are one operation).
  if (c.pattern != Pattern::kMatrix && method_info(c.method).kind == MethodKind::kCopy)
    seconds += samples * double(c.flows.size() - std::min<size_t>(c.flows.size(), 1)) * costs.extra_flow_sample_s;
  if (c.routing_skew && c.chunk_bytes && *c.chunk_bytes)
    seconds += double(c.bytes / *c.chunk_bytes) * costs.tokens_case_s_per_token;
  if (c.workload == kGemmWorkload) seconds += costs.gemm_workload_case_s;
  if (method_info(c.method).kind == MethodKind::kAtomic) seconds += samples * costs.atomic_sample_s;
  if (c.tiles) seconds += costs.tiled_case_s;
  return seconds;
}

// Warm-up launches before a case's samples: as many samples as fill warmup_time_ms for timed
// transfers (TransferTimer::warmup_launches_for), else the procedure's one warm-up sample.
double warmup_launches_for(const Config& config, const CaseSpec& c, double sample_seconds) {
  if (method_info(c.method).cost != SampleCost::kTimedTransfers) return 1.0;
  return std::clamp(std::ceil(config.warmup_time_ms * 1e-3 / std::max(sample_seconds, 1e-9)), 1.0, kMaxWarmupLaunches);
}

// A latency case under load waits for its load to end (Session::measure_under_load): what that
// adds to the latency case's own samples. The load is a bandwidth case of its own: its set-up,
// warm-up and one verification, and it runs load_seconds, the latency samples inside that time.
void add_load(const Config& config, const CaseSpec& c, const GroupLayout& layout, const CaseCostModel& costs,
              double latency_seconds, SweepEstimate& e) {
  const CaseSpec load = c.load_case();
  const SampleWork work = transfer_sample(config, load, layout, costs);
  const double running = std::max(load_seconds(config, c), latency_seconds);
  e.setup_seconds += costs.per_case_s;
  e.warmup_seconds += warmup_launches_for(config, load, work.seconds) * work.seconds;
  e.transfer_seconds += running - latency_seconds;
  e.verify_seconds += verify_seconds(config, load, layout, work.transfers, costs);
  e.bytes_moved += double(load.bytes) * double(load.flows.size()) * running / work.seconds * work.transfers;
}

// What a phase of both at once adds to the transfer's own time where the transfer's kernels share
// every SM with the GEMM (CaseCostModel::gemm_shared_tflops): each of its `transfers` lasts at
// least one GEMM launch. 0 where the transfer has SMs of its own or takes none.
double shared_sm_wait_seconds(const Config& config, const CaseSpec& c, const SampleWork& work, const CaseCostModel& costs) {
  if (c.workload != kGemmWorkload || c.sm_partition.value_or(0) > 0) return 0;
  const Method engine = c.transfer_method();
  if (!takes_sms(engine) && !method_info(engine).needs_nccl) return 0;
  const double gemm_launch_s = config.interference.gemm.flops() / (costs.gemm_shared_tflops * 1e12);
  return work.transfers * std::max(0.0, gemm_launch_s - work.seconds / work.transfers);
}

void add_case(const Config& config, const CaseSpec& c, const GroupLayout& layout, const CaseCostModel& costs, SweepEstimate& e) {
  const SampleCost cost = method_info(c.method).cost;
  SampleWork work = fixed_steps(c.method) ? SampleWork{fixed_sample_seconds(config, c, costs), 1}
                                          : transfer_sample(config, c, layout, costs);
  const double samples = config.samples;
  double warmup_launches = warmup_launches_for(config, c, work.seconds);
  // interference: transfer alone, workload alone (twice where partitioned), both at once, each
  // phase at most kInterferenceMaxLaunches transfers; a warm-up of each instead of
  // warmup_time_ms; the transfer moves bytes in two phases.
  double phases = 1, transfer_phases = 1, shared_wait_s = 0;
  if (cost == SampleCost::kPhases) {
    const double capped = std::min(work.transfers, double(kInterferenceMaxLaunches));
    work = {work.seconds * capped / work.transfers, capped};
    phases = c.sm_partition.value_or(0) > 0 ? 4.0 : 3.0;
    transfer_phases = 2;
    warmup_launches = 2;
    shared_wait_s = shared_sm_wait_seconds(config, c, work, costs);
  }
  const double verify = verify_seconds(config, c, layout, work.transfers, costs);
  e.samples += uint64_t(config.samples);
  e.setup_seconds += costs.per_case_s + samples * phases * costs.per_sample_s + family_seconds(config, c, costs);
  e.transfer_seconds += samples * (phases * work.seconds + shared_wait_s);
  e.warmup_seconds += warmup_launches * work.seconds;
  e.verify_seconds += samples * transfer_phases * verify;
  if (!fixed_steps(c.method))
    e.bytes_moved += double(c.bytes) * double(c.flows.size()) * work.transfers * (transfer_phases * samples + warmup_launches);
  if (is_latency(c.method) && c.load && !c.load->flows.empty())
    add_load(config, c, layout, costs, (samples + 1) * work.seconds, e);
}

}  // namespace

double fixed_sample_seconds(const Config& config, const CaseSpec& c, const CaseCostModel& costs) {
  switch (method_info(c.method).cost) {
    case SampleCost::kRoundTrips:
      return double(config.latency.round_trips) * 2 * (costs.signal_one_way_s + double(c.bytes) * costs.signal_s_per_byte);
    case SampleCost::kSmallCopies: return double(config.latency.ce_copies) * costs.ce_copy_latency_s;
    case SampleCost::kChaseLoads: {
      const ReadChase r = c.read_chase.value_or(ReadChase{});
      return (r.launch == "every_sm" ? costs.sms_for_every_sm_chase : 1.0) * double(r.loads) * costs.read_load_s;
    }
    default: return 0;
  }
}

CaseCostModel CaseCostModel::upper_bound() {
  CaseCostModel slow;
  slow.signal_one_way_s = 2.5e-6;  // 2.7x the H200 pair's flag_in_data one way
  slow.read_load_s = 2e-6;         // 2.4x its remote load
  slow.ce_copy_latency_s = 60e-6;  // 8x its copy: a sample issues each copy twice (alone, then back to back)
  return slow;
}

double concurrent_transfer_seconds(const CaseSpec& c, const GroupLayout& layout, const CaseCostModel& costs) {
  struct GpuLoad {
    double egress = 0, ingress = 0, within = 0, host = 0;
  };
  std::map<std::string, GpuLoad> load;
  const double bytes = double(c.bytes);
  for (const Flow& f : c.flows) {
    const std::string& src = layout.gpu_of_rank.at(size_t(f.src_rank));
    const std::string& dst = layout.gpu_of_rank.at(size_t(f.dst_rank));
    if (is_host_link(c.method)) {
      load[src].host += bytes;
    } else if (src == dst) {
      load[src].within += bytes;
    } else {
      load[src].egress += bytes;
      load[dst].ingress += bytes;
    }
  }
  double seconds = costs.transfer_floor_s;
  if (c.blocks && method_info(c.method).cost_per_block)
    seconds = std::max(seconds, bytes / (double(*c.blocks) * costs.gbps_per_block * 1e9));
  for (const auto& [gpu, l] : load)
    seconds = std::max(seconds, std::max(l.egress, l.ingress) / (costs.link_gbps * 1e9) + l.within / (costs.same_gpu_gbps * 1e9) +
                                    l.host / (costs.host_link_gbps * 1e9));
  return seconds;
}

SweepEstimate estimate(const Config& config, const std::vector<CaseSpec>& cases, const GroupLayout& layout,
                       const CaseCostModel& costs) {
  SweepEstimate e;
  e.cases = cases.size();
  bool nccl = false;
  for (const CaseSpec& c : cases) {
    if (static_skip_reason(c) || group_skip_reason(c, layout)) {
      ++e.skipped;
      continue;
    }
    add_case(config, c, layout, costs, e);
    nccl = nccl || method_info(c.method).needs_nccl;
  }
  if (nccl) e.setup_seconds += costs.nccl_setup_s;
  e.seconds = e.setup_seconds + e.transfer_seconds + e.warmup_seconds + e.verify_seconds;
  return e;
}

SweepEstimate estimate(const Config& config, const std::vector<CaseSpec>& cases) {
  return estimate(config, cases, GroupLayout::distinct(2));
}

}  // namespace p2pbench
