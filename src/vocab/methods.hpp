// The method registry: every way p2pbench moves (or times) bytes, in one table. The sweep's
// axes, the config's and CLI's method names, the console, `p2pbench --list-methods`, the
// committed schema/methods.json (which the schema's method enums and the Python report read) all
// derive from it. The ground floor: nothing here includes anything of p2pbench's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vocab/flows.hpp"
#include "vocab/row_fields.hpp"
#include "vocab/shape_axes.hpp"

namespace p2pbench {

struct KernelShape;      // vocab/kernel_shape.hpp: what a method's rules across its axes read
struct SettingsSection;  // config/settings_section.hpp: a config section of a method's own settings

enum class Method { kCe, kLdst, kTma, kH2d, kD2h, kStaged, kNccl, kLatencySignal, kLatencyRead, kLatencyCe, kAtomic,
                    kInterference, kNcclReduceScatter, kNcclAllGather, kNcclAllReduce, kLatencyHost, kNcclAllToAll };
// The method a config without "methods" runs, and the one a case or a load names until it is set.
inline constexpr Method kDefaultMethod = Method::kCe;

// What a method's case is, which decides the loop that runs it and the figure it reports.
enum class MethodKind {
  kCopy,              // one-sided: one rank's engine moves the bytes through the peer mapping
  kHostLink,          // one GPU and pinned host memory: cases run r -> r
  kLocal,             // one GPU alone, its own memory: cases run r -> r
  kTwoSidedBaseline,  // both ranks take part (no push/pull): recorded as push
  kLatency,           // a latency_us figure
  kAtomic,            // remote atomic operations through the peer mapping
  kInterference,      // a transfer engine beside a workload; the engine is a field of the case
  kCollective,        // every rank of the case's flows takes part: time, algorithm and bus bandwidth
};

// The collective operation a kCollective method performs (vocab/collectives.hpp: its sizes and
// bus factor).
enum class Collective { kNone, kReduceScatter, kAllGather, kAllReduce, kAllToAll };
// The type of a collective's elements (vocab/collectives.hpp: their bytes and name).
enum class CollectiveElement { kF32, kBf16 };

// How the dry run prices one sample of the method (plan/estimate.cpp holds the measured
// constants), and so how long a load beside a latency case must last.
enum class SampleCost {
  kTimedTransfers,  // transfers repeat until min_sample_time; the warm-up fills warmup_time
  kTimedOneWarmup,  // the same, after one warm-up sample
  kRoundTrips,      // latency.round_trips ping-pong round trips, after one warm-up sample
  kChaseLoads,      // the read chase's loads (every_sm: on every SM), after one warm-up sample
  kSmallCopies,     // latency.ce_copies copies, after one warm-up sample
  kPhases,          // interference: 3 or 4 gated phases of transfers and workload, a warm-up of each
};

// A kernel-shape axis a method sweeps: the config section named after the method holds its
// values ("ldst": {"blocks": [...]}), expanded with the method's other swept axes in the order
// declared (the first outermost).
struct SweptAxis {
  ShapeAxis axis;
  std::vector<uint64_t> defaults;  // without the key in the config
  bool (*valid)(uint64_t value);   // the value's own rule, or null (a rule across axes is the method's own)
  const char* rule;                // what `valid` asks, for the error
  const char* help;                // config key help
};

// The blocks and threads axes as every kernel method sweeps them (1..65535 blocks, whole warps up
// to 1024 threads), with the method's default and help.
SweptAxis blocks_axis(uint64_t default_blocks, const char* help);
SweptAxis threads_axis(uint64_t default_threads, const char* help);
SweptAxis unroll_axis(uint64_t default_unroll, const char* help);

// A limit across some of a method's swept axes that no GPU lifts: a config whose values break it
// is refused before any case runs, the error naming the first of `axes` (its key, index and value).
struct AxesLimit {
  std::vector<ShapeAxis> axes;  // the axes it reads, their values combined in this order (the first outermost)
  // Why `shape` (its `axes` set) is beyond the limit, or nullopt.
  std::optional<std::string> (*broken_by)(const KernelShape& shape);
};

struct MethodInfo {
  Method id;
  const char* name;         // in configs, on the command line and in results
  MethodKind kind;
  // Kernel-shape fields its rows carry that come from a section of its own rather than from
  // `swept` (atomics: blocks and threads of the "atomic" section).
  std::vector<ShapeAxis> own_axes;
  const char* title;        // in plots and tables
  const char* color;        // the report's plot colour (matplotlib); "" for none
  // The method's place in every list of methods (the registry, --list-methods, the report's
  // tables and legends: copies, baselines, host link, latency), unique: a method registered
  // beyond the built-in ones takes its run-time id from it, so adding a method moves no other.
  int report_order;
  // May be the traffic beside another case: the bandwidth load beside a latency case
  // (latency.load.method) and the transfer beside an interference case's workload
  // (interference.engines). A one-sided copy whose engine the case loop makes.
  bool runs_as_load;
  const char* sanitizer_skip;  // why it cannot run under compute-sanitizer, or ""
  const char* help;         // one line for --help and --list-methods
  std::vector<SweptAxis> swept = {};  // the axes of its config section ({} : none, no section)
  bool crosses_nodes = false;    // runs between ranks of different nodes (no CUDA IPC mapping needed)
  bool needs_both_ends_running = false;  // its two ends' kernels wait for each other: two processes
                                         // taking turns on one GPU (no MPS) cannot run it
  SampleCost cost = SampleCost::kTimedTransfers;
  bool push_only = false;  // its sender writes the receiver's memory: no pull (recorded as push)
  Collective collective = Collective::kNone;  // kCollective methods: the operation
  bool needs_nccl = false;  // runs on the session's NCCL communicator (opened while its cases run)
  CollectiveElement collective_element = CollectiveElement::kF32;  // kCollective methods: what they add or move
  // The config section of its own settings beyond its swept axes, or null (the gds methods'
  // "gds": {"directory"}; methods may share one). Its cases carry them (CaseSpec::settings).
  const SettingsSection* settings = nullptr;
  bool on_own_gpu = false;  // a latency method of one GPU and its host memory: cases r -> r, as kHostLink's
  // The dry run: a flow moves at most CaseCostModel::gbps_per_block per block of its kernel
  // (an SM copy kernel, bound by its blocks when they are few).
  bool cost_per_block = false;
  // The fields its rows add beyond those of every row and of its kind (results/method_row_fields.hpp).
  std::vector<RowField> row_fields = {};
  // Its own rules, which the core asks for rather than naming the method. Limits across its swept
  // axes that no GPU lifts (the config is refused: plan/sweep_limits.cpp).
  std::vector<AxesLimit> axes_limits = {};
  // Why a case of this kernel shape can never run (a rule across its axes; the case is skipped
  // with the reason), or null for none.
  std::optional<std::string> (*shape_skip)(const KernelShape& shape) = nullptr;
  // Why a case of these flows at once cannot run (skipped with the reason), or null for none.
  std::optional<std::string> (*flows_skip)(const std::vector<Flow>& flows) = nullptr;
  // What it needs that only a run can check, a line each of the dry run's list ("" for none;
  // methods that need the same share one line): of the GPU (listed before the links between GPUs)
  // and of the host (listed last).
  const char* gpu_need = "";
  const char* host_need = "";
  // Its cases run through the node's staging area in shared pinned host memory, a session
  // resource held while they run (engines/baseline_resources.hpp).
  bool needs_staging_area = false;
  // May be the transfer beside an interference case's workload though not a latency case's load:
  // a flow whose two ends both run (a sender and a receiver that waits for it), which the
  // interference loop runs on both ranks of the pair, each end in its place.
  bool runs_beside_workload = false;
  // Copies from one buffer of the rank's GPU to another (source and destination, 2 x bytes, on
  // one GPU): where both fit in its L2 the figure is the L2's, not the memory's, and the summary's
  // best configuration is taken from the cases that do not fit.
  bool copies_within_gpu = false;
};

// Every method: the built-in ones in the order of the Method enum, then those registered in the
// order of their report_order (whatever order the linker ran their registrations in).
const std::vector<MethodInfo>& method_registry();

// Adds a method beyond the built-in ones, before main() runs (a static initializer of the
// method's engine, P2PBENCH_REGISTER_METHOD in engines/engine_registry.hpp); returns its id,
// registered_method_id(info.report_order): what other methods are registered, and in which
// order, changes no id. The registry is only written before main(): everything after reads it.
// Throws std::logic_error for a name or a report_order already taken.
Method register_method(MethodInfo info);
// The id of the registered method whose report_order is `order`: a Method value past the
// enumerators.
Method registered_method_id(int order);
// The method's swept axis `a`, or null where it does not sweep it.
const SweptAxis* swept_axis(Method m, ShapeAxis a);
const MethodInfo& method_info(Method m);
const char* to_string(Method m);
std::optional<Method> parse_method(const std::string& s);
std::vector<std::string> method_names();
// "ce, ldst, tma" for the methods that satisfy `keep`.
std::string method_list(bool (*keep)(const MethodInfo&));

const char* to_string(MethodKind k);

inline bool is_latency(Method m) { return method_info(m).kind == MethodKind::kLatency; }
inline bool is_interference(Method m) { return method_info(m).kind == MethodKind::kInterference; }
inline bool is_host_link(Method m) { return method_info(m).kind == MethodKind::kHostLink; }
// A probe: a latency or atomic method, whose cases expand their own named axes (plan/probe_axes.hpp).
inline bool is_probe(Method m) { return is_latency(m) || method_info(m).kind == MethodKind::kAtomic; }
// Whether each rank runs the method on its own GPU (cases r -> r, one per rank; one rank suffices).
inline bool runs_on_own_gpu(Method m) {
  const MethodInfo& info = method_info(m);
  return info.kind == MethodKind::kHostLink || info.kind == MethodKind::kLocal || info.on_own_gpu;
}
// The pointer-chase latency methods (ReadChase): through the peer's memory, or the host's.
inline bool chases_pointers(Method m) { return method_info(m).cost == SampleCost::kChaseLoads; }
inline bool is_two_sided_baseline(Method m) { return method_info(m).kind == MethodKind::kTwoSidedBaseline; }
inline bool is_collective(Method m) { return method_info(m).kind == MethodKind::kCollective; }
// Whether the method reaches the peer's memory through its IPC mapping (everything but the
// methods of a rank's own GPU and the two-sided baselines and NCCL, which is what still runs where
// peer access is impossible).
inline bool needs_peer_mapping(Method m) {
  return !(runs_on_own_gpu(m) || is_two_sided_baseline(m) || method_info(m).needs_nccl);
}
// Whether its cases hold a session resource (NCCL communicator, staging area) while they run.
inline bool needs_session_resource(Method m) {
  return method_info(m).needs_staging_area || method_info(m).needs_nccl;
}
// Methods that move data one way whoever drives: run at the config's first direction and
// recorded as push.
inline bool runs_one_way(Method m) { return is_two_sided_baseline(m) || method_info(m).push_only; }
// The kernel-shape fields its rows carry: its swept axes, then its own.
std::vector<std::string> axes_of(Method m);
// Whether its kernel takes SMs of their own (it sweeps a blocks axis); the copy engine takes none.
inline bool takes_sms(Method m) { return swept_axis(m, ShapeAxis::kBlocks) != nullptr; }
// Whether it may be the transfer of an interference case (interference.engines).
inline bool may_run_beside_workload(const MethodInfo& m) { return m.runs_as_load || m.runs_beside_workload; }
// The method marked as the transfer beside an interference case's workload (runs_beside_workload).
inline MethodInfo beside_workload(MethodInfo m) {
  m.runs_beside_workload = true;
  return m;
}

}  // namespace p2pbench
