#include "plan/sweep.hpp"

#include <algorithm>
#include <cmath>

#include "common/errors.hpp"

namespace p2pbench {

namespace {

// One kernel shape: the values of the axes a method has (unset = not applicable).
struct Shape {
  std::optional<int> blocks, threads, unroll, stages;
  std::optional<uint64_t> smem_bytes;
};

std::vector<Shape> shapes_of(Method m, const Config& c) {
  std::vector<Shape> out;
  switch (m) {
    case Method::kCe:
    case Method::kH2d:
    case Method::kD2h:
    default:
      out.push_back({});
      break;
    case Method::kLdst:
      for (auto b : c.ldst.blocks)
        for (auto t : c.ldst.threads)
          for (auto u : c.ldst.unroll) out.push_back({int(b), int(t), int(u), std::nullopt, std::nullopt});
      break;
    case Method::kTma:
      for (auto b : c.tma.blocks)
        for (auto s : c.tma.smem_bytes)
          for (auto st : c.tma.stages) out.push_back({int(b), std::nullopt, std::nullopt, int(st), s});
      break;
  }
  return out;
}

}  // namespace

namespace {

void push_orientations(CaseSpec c, std::vector<CaseSpec>& cases) {
  for (const auto& [src, dst] : {std::pair{0, 1}, std::pair{1, 0}}) {
    c.flows = {{src, dst}};
    cases.push_back(c);
  }
}

// latency_read: one case per combination of the read axes (the load kind varies fastest, so
// the console's table lists plain, relaxed_sys and absolute of one variant together).
void expand_read_chases(const LatencySettings& l, CaseSpec c, std::vector<CaseSpec>& cases) {
  for (uint64_t footprint : l.read_footprint_bytes)
    for (uint64_t stride : l.read_stride_bytes)
      for (uint64_t loads : l.read_loads)
        for (const std::string& launch : l.read_launch)
          for (const std::string& timing : l.read_timing)
            for (const std::string& owner : l.read_owner)
              for (const std::string& load : l.read_protocols) {
                ReadChase r;
                r.load = load;
                r.launch = launch;
                r.timing = timing;
                r.owner = owner;
                r.stride_bytes = stride;
                r.loads = loads;
                c.bytes = footprint;
                c.protocol = r.protocol();
                c.read_chase = r;
                push_orientations(c, cases);
              }
}

// Latency and atomic cases: one way at a time, both orientations; their own axes.
void expand_probe_method(Method m, const Config& config, std::vector<CaseSpec>& cases) {
  CaseSpec c;
  c.method = m;
  c.mode = Mode::kUni;
  c.direction = m == Method::kLatencyRead ? Direction::kPull : Direction::kPush;
  switch (m) {
    case Method::kLatencySignal:
      for (const std::string& protocol : config.latency.protocols)  // one console table per protocol
        for (uint64_t payload : config.latency.payload_bytes) {
          c.bytes = payload;
          c.protocol = protocol;
          push_orientations(c, cases);
        }
      break;
    case Method::kLatencyRead:
      expand_read_chases(config.latency, c, cases);
      break;
    case Method::kLatencyCe:
      for (uint64_t payload : config.latency.payload_bytes) {
        c.bytes = payload;
        push_orientations(c, cases);
      }
      break;
    case Method::kAtomic:
      for (const std::string& type : config.atomic.types)
        for (const std::string& pattern : config.atomic.patterns)
          for (uint64_t blocks : config.atomic.blocks)
            for (uint64_t threads : config.atomic.threads) {
              c.atomic_type = type;
              c.atomic_pattern = pattern;
              c.ops_per_thread = config.atomic.ops_per_thread;
              c.hot_addresses = pattern == "hot_spot" ? std::optional<uint64_t>(config.atomic.hot_addresses) : std::nullopt;
              c.blocks = int(blocks);
              c.threads = int(threads);
              c.bytes = blocks * threads * config.atomic.ops_per_thread * atomic_type_bytes(type);  // per launch
              push_orientations(c, cases);
            }
      break;
    default:
      break;
  }
}

// --- interference (issue 13) ---------------------------------------------------------------
// One case per workload, engine, engine shape, direction, mode, size and SM partition (the
// partition innermost: one trade curve per engine). The copy engine takes no SMs: it runs once,
// unpartitioned. Uni cases run 0 -> 1 only: the driving GPU is GPU 0 (push) or GPU 1 (pull).
void expand_interference(const Config& config, std::vector<CaseSpec>& cases) {
  const InterferenceSettings& s = config.interference;
  for (const std::string& workload : s.workloads)
    for (Method engine : s.engines)
      for (const Shape& shape : shapes_of(engine, config))
        for (Direction d : config.directions)
          for (Mode mode : config.modes)
            for (uint64_t bytes : config.sizes)
              for (uint64_t k : engine == Method::kCe ? std::vector<uint64_t>{0} : s.sm_partitions) {
                CaseSpec c;
                c.method = Method::kInterference;
                c.engine = engine;
                c.workload = workload;
                c.sm_partition = int(k);
                c.both_gpus_busy = s.both_gpus_busy;
                c.direction = d;
                c.mode = mode;
                c.bytes = bytes;
                c.flows = mode == Mode::kUni ? std::vector<Flow>{{0, 1}} : std::vector<Flow>{{0, 1}, {1, 0}};
                c.blocks = shape.blocks;
                c.threads = shape.threads;
                c.unroll = shape.unroll;
                c.smem_bytes = shape.smem_bytes;
                c.stages = shape.stages;
                cases.push_back(c);
              }
}

}  // namespace

// The case of the transfer engine alone: the method the engine's code knows.
CaseSpec transfer_case_of(const CaseSpec& c) {
  CaseSpec t = c;
  if (c.engine) t.method = *c.engine;
  t.engine.reset();
  t.workload.reset();
  t.sm_partition.reset();
  t.both_gpus_busy.reset();
  return t;
}

std::vector<CaseSpec> expand_cases(const Config& config) {
  std::vector<CaseSpec> cases;
  for (Method m : config.methods) {
    if (is_interference(m)) {  // issue 13
      expand_interference(config, cases);
      continue;
    }
    if (is_latency(m) || m == Method::kAtomic) {
      expand_probe_method(m, config, cases);
      continue;
    }
    for (Direction d : config.directions)
      for (Mode mode : config.modes) {
        // A host link has one way to run per GPU: recorded as push, uni, r -> r.
        if (is_host_link(m) && (d != config.directions.front() || mode != config.modes.front())) continue;
        // Baselines move data one way whoever drives: one direction, recorded as push.
        if (is_two_sided_baseline(m) && d != config.directions.front()) continue;
        for (const Shape& shape : shapes_of(m, config))
          for (uint64_t bytes : config.sizes) {
            CaseSpec c;
            c.method = m;
            c.direction = is_two_sided_baseline(m) || is_host_link(m) ? Direction::kPush : d;
            c.mode = is_host_link(m) ? Mode::kUni : mode;
            c.bytes = bytes;
            c.blocks = shape.blocks;
            c.threads = shape.threads;
            c.unroll = shape.unroll;
            c.smem_bytes = shape.smem_bytes;
            c.stages = shape.stages;
            if (is_host_link(m)) {
              for (int r : {0, 1}) {
                c.flows = {{r, r}};
                cases.push_back(c);
              }
            } else if (c.mode == Mode::kBidir) {
              c.flows = {{0, 1}, {1, 0}};
              cases.push_back(c);
            } else {
              push_orientations(c, cases);
            }
          }
      }
  }
  return cases;
}

std::optional<std::string> static_skip_reason(const CaseSpec& c) {
  if (is_interference(c.method))  // issue 13: the transfer's own reasons
    return c.engine ? static_skip_reason(transfer_case_of(c)) : std::optional<std::string>("an interference case needs an engine");
  if (c.method != Method::kTma) return std::nullopt;
  const uint64_t chunk = *c.smem_bytes / uint64_t(*c.stages);
  if (*c.smem_bytes % uint64_t(*c.stages) != 0 || chunk % 16 != 0 || chunk == 0)
    return "smem_bytes " + std::to_string(*c.smem_bytes) + " / stages " + std::to_string(*c.stages) +
           " is not a whole multiple of 16 bytes per stage (bulk copies move 16-byte multiples)";
  return std::nullopt;
}

SweepEstimate estimate(const Config& config, const std::vector<CaseSpec>& cases, double gbps) {
  SweepEstimate e;
  e.cases = cases.size();
  constexpr double kTransferFloorS = 3e-6;  // launch + completion of one small transfer
  constexpr double kPerSampleOverheadS = 300e-6;  // gate, barriers, verification set-up
  constexpr double kPerCaseOverheadS = 0.05;      // calibration, graph capture, SM count (seen on H200)
  for (const CaseSpec& c : cases) {
    if (static_skip_reason(c)) {
      ++e.skipped;
      continue;
    }
    if (c.read_chase) {  // latency_read: dependent loads of ~1 us (an H200 pair: 0.85), every_sm on ~132 SMs
      const double launches = c.read_chase->launch == "every_sm" ? 132.0 : 1.0;
      e.seconds += (config.samples + 1) * launches * double(c.read_chase->loads) * 1e-6 + kPerCaseOverheadS;
      continue;
    }
    const double directions = c.mode == Mode::kBidir ? 2.0 : 1.0;
    const double transfer_s = std::max(kTransferFloorS, double(c.bytes) / (gbps * 1e9));
    const double sample_s = std::max(config.min_sample_time_ms * 1e-3, transfer_s);
    const double iterations = std::ceil(sample_s / transfer_s);
    const double verify_s = config.verify ? 3.0 * double(c.bytes) / 1e12 : 0.0;
    // interference (issue 13): transfer alone, workload alone (twice where partitioned), both at
    // once, and a warm-up of each; the transfer moves bytes in two of those.
    const double phases = is_interference(c.method) ? (c.sm_partition.value_or(0) > 0 ? 4.0 : 3.0) : 1.0;
    const double transfer_phases = is_interference(c.method) ? 2.0 : 1.0;
    e.seconds += config.samples * (phases * sample_s + transfer_phases * verify_s + phases * kPerSampleOverheadS) +
                 (is_interference(c.method) ? 2.0 * sample_s : config.warmup_time_ms * 1e-3) + kPerCaseOverheadS;
    e.bytes_moved += directions * double(c.bytes) * iterations * (transfer_phases * config.samples + 1);
  }
  return e;
}

}  // namespace p2pbench
