#include "plan/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "common/errors.hpp"
#include "plan/patterns.hpp"
#include "plan/probe_axes.hpp"

namespace p2pbench {

namespace {

// One kernel shape: the values of the axes a method has (unset = not applicable).
using Shape = KernelShape;

// Gives a case (or a load) the shape: its kernel-shape part becomes `shape`.
void set_shape(KernelShape& spec, const Shape& shape) { spec = shape; }

// Every combination of the method's swept axes (the registry's order, the first outermost);
// one empty shape for a method that sweeps none.
std::vector<Shape> shapes_of(Method m, const Config& c) {
  std::vector<Shape> out{Shape{}};
  for (const SweptAxis& axis : method_info(m).swept) {
    std::vector<Shape> grown;
    for (const Shape& partial : out)
      for (uint64_t v : c.kernel_axes.of(m, axis.axis)) {
        grown.push_back(partial);
        grown.back().set_axis(axis.axis, v);
      }
    out = std::move(grown);
  }
  return out;
}

// The first value of each swept axis: the shape a method runs with as a latency case's load.
Shape first_shape_of(Method m, const Config& c) {
  Shape s;
  for (const SweptAxis& axis : method_info(m).swept) s.set_axis(axis.axis, c.kernel_axes.of(m, axis.axis).front());
  return s;
}

// --- counting without expanding (count_cases) ----------------------------------------------
uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}
uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}
uint64_t product(std::initializer_list<uint64_t> factors) {
  uint64_t p = 1;
  for (uint64_t f : factors) p = saturating_mul(p, f);
  return p;
}

uint64_t shape_count(Method m, const Config& c) {
  uint64_t count = 1;
  for (const SweptAxis& axis : method_info(m).swept) count = saturating_mul(count, c.kernel_axes.of(m, axis.axis).size());
  return count;
}

// The directions an interference engine runs at: a one-way engine (put_signal: the sender writes
// the receiver's memory) at push only, whatever the config's directions: its sender is GPU 0,
// which runs the workload.
std::vector<Direction> interference_directions(Method engine, const Config& config) {
  if (runs_one_way(engine)) return {Direction::kPush};
  return config.directions;
}

// The modes an interference engine runs at: a collective both ways only (its ranks send to each
// other every way), the others the config's.
std::vector<Mode> interference_modes(Method engine, const Config& config) {
  if (!is_collective(engine)) return config.modes;
  if (std::find(config.modes.begin(), config.modes.end(), Mode::kBidir) == config.modes.end()) return {};
  return {Mode::kBidir};
}

// As expand_interference: an engine that takes no SMs (the copy engine) has no SM partitions.
uint64_t interference_cases(const Config& config) {
  const InterferenceSettings& s = config.interference;
  uint64_t total = 0;
  for (Method engine : s.engines)
    total = saturating_add(total, product({s.workloads.size(), shape_count(engine, config),
                                           interference_directions(engine, config).size(),
                                           interference_modes(engine, config).size(), config.sizes.size(),
                                           takes_sms(engine) ? s.sm_partitions.size() : 1}));
  return total;
}

}  // namespace

namespace {

// Latency and atomic cases: every ordered pair of the group alone, in matrix order (two ranks:
// 0 -> 1, then 1 -> 0).
void push_pairs(CaseSpec c, const std::vector<Flow>& pairs, std::vector<CaseSpec>& cases) {
  c.pattern = Pattern::kMatrix;
  c.schedule = Schedule::kSequential;
  for (const Flow& f : pairs) {
    c.flows = {f};
    cases.push_back(c);
  }
}

// The load beside a latency case of pair `p`: the configured pattern over the other ranks (in
// rank order). Fewer than two other ranks: no flows (the case is skipped with that reason).
std::vector<Flow> load_flows(const LatencyLoad& load, const Flow& p, int ranks) {
  std::vector<int> others;
  for (int r = 0; r < ranks; ++r)
    if (r != p.src_rank && r != p.dst_rank) others.push_back(r);
  std::vector<Flow> flows;
  const size_t n = others.size();
  if (n < 2) return flows;
  if (load.pattern == Pattern::kRing) {
    for (size_t i = 0; i < n; ++i) flows.push_back({others[i], others[(i + 1) % n]});
  } else if (load.pattern == Pattern::kBisection) {
    for (size_t i = 0; i < n / 2; ++i) flows.push_back({others[i], others[i + n / 2]});
  } else {
    for (int a : others)
      for (int b : others)
        if (a != b) flows.push_back({a, b});
  }
  return flows;
}

// A latency method of one GPU (its host link): r -> r for every rank.
std::vector<Flow> own_gpu_flows(int ranks) {
  std::vector<Flow> flows;
  for (int r = 0; r < ranks; ++r) flows.push_back({r, r});
  return flows;
}

// Latency under load: after every latency case, its twin with the load beside it.
void add_load_twins(const Config& config, int ranks, size_t first, std::vector<CaseSpec>& cases) {
  if (!config.latency.load) return;
  const LatencyLoad& l = *config.latency.load;
  std::vector<CaseSpec> out(cases.begin(), cases.begin() + long(first));
  for (size_t i = first; i < cases.size(); ++i) {
    out.push_back(cases[i]);
    CaseSpec twin = cases[i];
    LoadSpec load;
    load.method = l.method;
    load.direction = l.direction;
    load.pattern = l.pattern;
    load.bytes = l.bytes;
    load.flows = load_flows(l, twin.flows.at(0), ranks);
    set_shape(load, first_shape_of(l.method, config));
    twin.load = load;
    out.push_back(twin);
  }
  cases = std::move(out);
}

// Latency and atomic cases: one way at a time, every ordered pair; their own named axes.
void expand_probe_method(Method m, const Config& config, const std::vector<Flow>& pairs, std::vector<CaseSpec>& cases) {
  CaseSpec c;
  c.method = m;
  c.mode = Mode::kUni;
  c.direction = chases_pointers(m) ? Direction::kPull : Direction::kPush;
  expand_probe_axes(c, probe_axes_of(m, config), [&](const CaseSpec& one) { push_pairs(one, pairs, cases); });
}

// --- interference ---------------------------------------------------------------
// One case per workload, engine, engine shape, direction, mode, size and SM partition (the
// partition innermost: one trade curve per engine). An engine that takes no SMs (the copy engine)
// runs once, unpartitioned. Uni cases run 0 -> 1 only: the driving GPU is GPU 0 (push) or GPU 1 (pull);
// a one-way engine's sender is GPU 0, its receiver GPU 1 (interference_directions). A collective
// engine runs both ways only (interference_modes), over every rank of the run: every ordered
// pair, pattern all_to_all with more than two (two keep the pair's name).
void expand_interference(Method interference, const Config& config, int ranks, std::vector<CaseSpec>& cases) {
  const InterferenceSettings& s = config.interference;
  for (Method engine : s.engines)
    if (interference_modes(engine, config).empty())
      throw InputError("interference.engines", to_string(engine),
                       "a collective runs both ways only, and this config's modes have no \"bidir\"");
  for (const std::string& workload : s.workloads)
    for (Method engine : s.engines)
      for (const Shape& shape : shapes_of(engine, config))
        for (Direction d : interference_directions(engine, config))
          for (Mode mode : interference_modes(engine, config))
            for (uint64_t bytes : config.sizes)
              for (uint64_t k : takes_sms(engine) ? s.sm_partitions : std::vector<uint64_t>{0}) {
                CaseSpec c;
                c.method = interference;
                c.engine = engine;
                c.workload = workload;
                c.sm_partition = int(k);
                c.both_gpus_busy = s.both_gpus_busy;
                c.transfer_high_priority = s.transfer_high_priority;
                c.direction = d;
                c.mode = mode;
                c.bytes = bytes;
                c.flows = mode == Mode::kUni ? std::vector<Flow>{{0, 1}} : std::vector<Flow>{{0, 1}, {1, 0}};
                if (is_collective(engine) && ranks > 2) {
                  c.flows = ordered_pairs(ranks);
                  c.pattern = Pattern::kAllToAll;
                }
                set_shape(c, shape);
                cases.push_back(c);
              }
}

// Whether a bandwidth method runs at this direction and mode. A method of a rank's own GPU (host
// link, local copy) has one way to run per GPU: recorded at the first direction and mode; one-way methods (runs_one_way) move data one way whoever
// drives: the first direction only.
bool runs_at(Method m, Direction d, Mode mode, const Config& config) {
  if (runs_on_own_gpu(m) && (d != config.directions.front() || mode != config.modes.front())) return false;
  if (runs_one_way(m) && d != config.directions.front()) return false;
  return true;
}

// Whether the method runs on the flow set: a collective takes part only where its ranks send to
// each other every way (all_to_all; a pair both ways), the other methods everywhere.
bool runs_on(Method m, const FlowSet& s) {
  if (!is_collective(m)) return true;
  std::set<std::pair<int, int>> pairs;
  std::set<int> ranks;
  for (const Flow& f : s.flows) {
    if (f.src_rank != f.dst_rank) pairs.insert({f.src_rank, f.dst_rank});
    ranks.insert({f.src_rank, f.dst_rank});
  }
  return ranks.size() >= 2 && pairs.size() == ranks.size() * (ranks.size() - 1);
}

// One case of a bandwidth method before its flows are set, with the settings of its own section.
CaseSpec bandwidth_case(Method m, Direction d, Mode mode, const Shape& shape, uint64_t bytes, const Config& config) {
  CaseSpec c;
  c.method = m;
  c.settings = config.settings_of(m);
  c.direction = runs_one_way(m) || runs_on_own_gpu(m) ? Direction::kPush : d;
  c.mode = runs_on_own_gpu(m) ? Mode::kUni : mode;
  c.bytes = bytes;
  set_shape(c, shape);
  return c;
}

// The pattern flow sets of each mode, made once per plan (rounds and samples are not free).
class FlowSetsByMode {
 public:
  FlowSetsByMode(const Config& config, const GroupLayout& layout) : config_(config), layout_(layout) {}
  const std::vector<std::vector<FlowSet>>& of(Mode mode) {
    auto& slot = by_mode_[mode == Mode::kUni ? 0 : 1];
    if (!slot) slot = pattern_flow_sets(config_, mode, layout_);
    return *slot;
  }

 private:
  const Config& config_;
  const GroupLayout& layout_;
  std::optional<std::vector<std::vector<FlowSet>>> by_mode_[2];
};

// ce, ldst, tma, staged, nccl: per direction and mode, each pattern in turn, its shapes and
// sizes, then its flow sets (two ranks, matrix: 0 -> 1 and 1 -> 0 per size, or the pair both
// ways). Methods of a rank's own GPU (host links, local copies): r -> r for every rank.
void expand_bandwidth_method(Method m, const Config& config, const GroupLayout& layout, FlowSetsByMode& sets,
                             std::vector<CaseSpec>& cases) {
  for (Direction d : config.directions)
    for (Mode mode : config.modes) {
      if (!runs_at(m, d, mode, config)) continue;
      if (runs_on_own_gpu(m)) {
        for (const HostAxes& host : host_axes_of(m, config))
          for (const Shape& shape : shapes_of(m, config))
            for (uint64_t bytes : config.sizes)
              for (int r = 0; r < layout.size(); ++r) {
                CaseSpec c = bandwidth_case(m, d, mode, shape, bytes, config);
                c.flows = {{r, r}};
                c.host_memory = host.memory;
                c.host_numa = host.numa;
                cases.push_back(c);
              }
        continue;
      }
      for (const std::vector<FlowSet>& pattern : sets.of(mode))
        for (const Shape& shape : shapes_of(m, config))
          for (uint64_t bytes : config.sizes)
            for (const FlowSet& s : pattern) {
              if (!runs_on(m, s)) continue;
              CaseSpec c = bandwidth_case(m, d, mode, shape, bytes, config);
              c.flows = s.flows;
              c.pattern = s.pattern;
              c.schedule = s.schedule;
              c.round = s.round;
              cases.push_back(c);
            }
    }
}

}  // namespace

std::vector<HostAxes> host_axes_of(Method m, const Config& config) {
  if (!is_host_link(m)) return {HostAxes{}};
  std::vector<HostAxes> out;
  for (HostMemoryKind kind : config.host.memory)
    for (NumaPlacement numa : config.host.numa) out.push_back({kind, numa});
  return out;
}

// The case of the transfer engine alone: the method the engine's code knows.
CaseSpec transfer_case_of(const CaseSpec& c) {
  CaseSpec t = c;
  t.method = c.transfer_method();
  t.engine.reset();
  t.workload.reset();
  t.sm_partition.reset();
  t.both_gpus_busy.reset();
  t.transfer_high_priority.reset();
  return t;
}

void check_rank_count(const Config& config, int ranks) {
  if (ranks >= 2) return;
  std::string between;
  for (Method m : config.methods)
    if (!runs_on_own_gpu(m)) between += std::string(between.empty() ? "" : ", ") + to_string(m);
  if (between.empty()) return;
  const std::string own = method_list([](const MethodInfo& i) { return runs_on_own_gpu(i.id); });
  throw InputError("methods", between,
                   "need at least 2 ranks, one per GPU (mpirun -np 2 ...), and this run has " +
                       std::to_string(ranks) + "; one rank runs the methods of its own GPU: " + own +
                       " (configs/one-gpu.json)");
}

// A method the config names but whose directions, modes and patterns leave it no case: refused,
// not run as an empty sweep (a collective on one-way flow sets wrote a results file of no case).
void check_method_has_cases(Method m, size_t cases_before, size_t cases_after) {
  if (cases_after > cases_before) return;
  throw InputError("methods", to_string(m),
                   is_collective(m) ? "no case in this plan: a collective runs on flow sets where every rank sends "
                                      "to every other (patterns all_to_all, or modes bidir with two ranks)"
                                    : "no case in this plan: its directions, modes and patterns leave none");
}

std::vector<CaseSpec> expand_cases(const Config& config, const GroupLayout& layout) {
  check_rank_count(config, layout.size());
  std::vector<CaseSpec> cases;
  const std::vector<Flow> pairs = ordered_pairs(layout.size());
  FlowSetsByMode sets(config, layout);
  for (Method m : config.methods) {
    const size_t before = cases.size();
    if (is_interference(m))  // ranks 0 and 1; a collective engine every rank
      expand_interference(m, config, layout.size(), cases);
    else if (is_probe(m)) {
      const size_t first = cases.size();
      expand_probe_method(m, config, runs_on_own_gpu(m) ? own_gpu_flows(layout.size()) : pairs, cases);
      if (is_latency(m)) add_load_twins(config, layout.size(), first, cases);
    }
    else
      expand_bandwidth_method(m, config, layout, sets, cases);
    check_method_has_cases(m, before, cases.size());
  }
  return cases;
}

std::vector<CaseSpec> expand_cases(const Config& config) { return expand_cases(config, GroupLayout::distinct(2)); }

uint64_t count_cases(const Config& config, const GroupLayout& layout) {
  check_rank_count(config, layout.size());
  const uint64_t ranks = uint64_t(layout.size());
  FlowSetsByMode sets(config, layout);
  uint64_t total = 0;
  for (Method m : config.methods) {
    if (is_interference(m)) {
      total = saturating_add(total, interference_cases(config));
      continue;
    }
    if (is_probe(m)) {
      const uint64_t twins = is_latency(m) && config.latency.load ? 2 : 1;  // latency under load
      const uint64_t flows = runs_on_own_gpu(m) ? ranks : ranks * (ranks - 1);
      total = saturating_add(total, saturating_mul(saturating_mul(probe_axes_count(probe_axes_of(m, config)), flows), twins));
      continue;
    }
    const uint64_t shapes = shape_count(m, config);
    for (Direction d : config.directions)
      for (Mode mode : config.modes) {
        if (!runs_at(m, d, mode, config)) continue;
        uint64_t per_shape_and_size = ranks * host_axes_of(m, config).size();  // a rank's own GPU: one per rank and host axis
        if (!runs_on_own_gpu(m)) {
          per_shape_and_size = 0;
          for (const auto& pattern : sets.of(mode))
            per_shape_and_size += uint64_t(std::count_if(pattern.begin(), pattern.end(), [&](const FlowSet& s) { return runs_on(m, s); }));
        }
        total = saturating_add(total, saturating_mul(saturating_mul(shapes, config.sizes.size()), per_shape_and_size));
      }
  }
  return total;
}

uint64_t count_cases(const Config& config) { return count_cases(config, GroupLayout::distinct(2)); }

std::optional<std::string> static_skip_reason(const CaseSpec& c) {
  if (is_interference(c.method))  // the transfer's own reasons
    return c.engine ? static_skip_reason(transfer_case_of(c)) : std::optional<std::string>("an interference case needs an engine");
  // The method's own rule across its axes (a shape its kernel cannot take).
  const auto shape_skip = method_info(c.method).shape_skip;
  return shape_skip ? shape_skip(c) : std::nullopt;
}

}  // namespace p2pbench
