#include "vocab/methods.hpp"

#include <algorithm>
#include <stdexcept>

#include "vocab/built_in_rules.hpp"

namespace p2pbench {

namespace {

// The built-in methods, the Method enum's: the first entries of the table, in its order.
constexpr size_t kBuiltInMethods = static_cast<size_t>(Method::kNcclAllToAll) + 1;
// A registered method's id: this plus its report_order, far past the enumerators.
constexpr int kFirstRegisteredId = 1000;

bool any_block_count(uint64_t v) { return v >= 1 && v <= 65535; }
bool whole_warps(uint64_t v) { return v >= 32 && v <= 1024 && v % 32 == 0; }
bool unroll_choice(uint64_t v) { return v == 1 || v == 2 || v == 4 || v == 8; }
bool tma_stages(uint64_t v) { return v >= 1 && v <= 32; }

// NCCL's collectives: on the session's communicator, every rank of the job taking part.
MethodInfo nccl_collective(Method id, const char* name, const char* title, int order, Collective op, const char* help) {
  MethodInfo m{id, name, MethodKind::kCollective, {}, title, "tab:red", order, false,
               "NCCL's kernels spin waiting for their peers", help};
  m.crosses_nodes = true;
  m.needs_both_ends_running = true;
  m.push_only = true;
  m.collective = op;
  m.needs_nccl = true;
  return m;
}

// A copy by an SM kernel: bound by its blocks where they are few (the dry run's cost).
MethodInfo sm_copy(MethodInfo m) {
  m.cost_per_block = true;
  return m;
}

// The TMA kernel's rules across its axes (shared memory and stages) and what it needs of a GPU.
MethodInfo with_tma_rules(MethodInfo m) {
  m.axes_limits = {{{ShapeAxis::kSmemBytes, ShapeAxis::kStages}, tma_shared_memory_limit}};
  m.shape_skip = tma_stage_bytes;
  m.gpu_need = kTmaGpuNeed;
  return m;
}

// The staged ring: a staging area of the node in pinned host memory, one region per sending rank.
MethodInfo with_staging_area(MethodInfo m) {
  m.needs_staging_area = true;
  m.flows_skip = staged_ring_overlap;
  m.host_need = kPinnedHostNeed;
  return m;
}

// A host-link copy of the built-in engine: its buffers in pinned host memory.
MethodInfo with_pinned_host(MethodInfo m) {
  m.host_need = kPinnedHostNeed;
  return m;
}

// The pointer chase of latency_read with its chain in this GPU's pinned host memory.
MethodInfo host_chase() {
  MethodInfo m{Method::kLatencyHost, "latency_host", MethodKind::kLatency, {}, "host pointer-chase latency", "", 74,
               false, "", "one dependent load from pinned host memory by one SM (a pointer chase over the host link)",
               {}, false, false, SampleCost::kChaseLoads};
  m.on_own_gpu = true;
  return m;
}

std::vector<MethodInfo>& table() {
  // Function-local, as the table: a method registered by another file's static initializer may
  // call table() before this file's own statics are made.
  static const SweptAxis kBlocks = blocks_axis(32, "blocks (= SMs) of the kernel");
  static const std::vector<SweptAxis> kLdstSwept = {
      kBlocks,
      threads_axis(1024, "threads per block"),
      unroll_axis(4, "16-byte loads in flight per thread"),
  };
  static const std::vector<SweptAxis> kTmaSwept = {
      kBlocks,
      // Bounded together with the stages (with_tma_rules), and per GPU by the engine.
      {ShapeAxis::kSmemBytes, {131072}, nullptr, "", "shared memory per block (bytes)"},
      {ShapeAxis::kStages, {4}, tma_stages, "stages must be 1..32", "shared-memory stages of the ring"},
  };
  static std::vector<MethodInfo> methods = {
      {Method::kCe, "ce", MethodKind::kCopy, {}, "copy engine", "tab:blue", 0, true, "",
       "the copy engine: cudaMemcpyAsync through the peer mapping"},
      sm_copy({Method::kLdst, "ldst", MethodKind::kCopy, {}, "LD/ST kernel", "tab:orange", 1, true, "",
               "an SM kernel of 16-byte loads and stores through the peer mapping", kLdstSwept}),
      with_tma_rules(sm_copy({Method::kTma, "tma", MethodKind::kCopy, {}, "TMA kernel", "tab:green", 2, true, "",
                              "an SM kernel of Hopper bulk copies (TMA) staged in shared memory", kTmaSwept})),
      with_pinned_host({Method::kH2d, "h2d", MethodKind::kHostLink, {}, "host→device", "tab:brown", 5, false, "",
                        "pinned host memory to the rank's own GPU (its host link)"}),
      with_pinned_host({Method::kD2h, "d2h", MethodKind::kHostLink, {}, "device→host", "tab:pink", 6, false, "",
                        "the rank's own GPU to pinned host memory (its host link)"}),
      with_staging_area({Method::kStaged, "staged", MethodKind::kTwoSidedBaseline, {}, "staged", "tab:purple", 3, false,
                         "its pipeline kernels spin on flags written by copies and by the peer",
                         "through a ring of pinned host buffers, without peer access (a baseline)"}),
      // Beside a workload too: what NCCL's send/receive costs a GEMM, against the engines built here.
      beside_workload({Method::kNccl, "nccl", MethodKind::kTwoSidedBaseline, {}, "NCCL", "tab:red", 4, false,
                       "NCCL's kernels spin waiting for their peers", "ncclSend/ncclRecv between the ranks (a baseline)",
                       {}, /*crosses_nodes=*/true, false, SampleCost::kTimedTransfers, false, Collective::kNone,
                       /*needs_nccl=*/true}),
      {Method::kLatencySignal, "latency_signal", MethodKind::kLatency, {}, "ping-pong latency", "", 7, false,
       "its ping-pong kernels spin on flags the peer GPU writes",
       "half a round trip of a flag (and payload) written into the peer's memory", {}, false,
       /*needs_both_ends_running=*/true, SampleCost::kRoundTrips},
      {Method::kLatencyRead, "latency_read", MethodKind::kLatency, {}, "pointer-chase latency", "", 8, false, "",
       "one dependent load from the peer's memory (a pointer chase)", {}, false, false, SampleCost::kChaseLoads},
      {Method::kLatencyCe, "latency_ce", MethodKind::kLatency, {}, "copy-engine latency", "", 9, false, "",
       "one small copy-engine copy to the peer, start to end", {}, false, false, SampleCost::kSmallCopies},
      {Method::kAtomic, "atomic", MethodKind::kAtomic, {ShapeAxis::kBlocks, ShapeAxis::kThreads}, "remote atomics", "", 10, false, "",
       "atomic adds into the peer's memory (types and address patterns)", {}, false, false, SampleCost::kTimedOneWarmup},
      {Method::kInterference, "interference", MethodKind::kInterference, {}, "interference", "", 11, false, "",
       "a transfer engine beside a GEMM or HBM workload: what each costs the other", {}, false, false, SampleCost::kPhases},
      nccl_collective(Method::kNcclReduceScatter, "nccl_reduce_scatter", "NCCL reduce-scatter", 30,
                      Collective::kReduceScatter, "ncclReduceScatter of f32 (sum) over the case's ranks"),
      // Beside a workload too, against the copy engine's all-gather and all-to-all.
      beside_workload(nccl_collective(Method::kNcclAllGather, "nccl_all_gather", "NCCL all-gather", 31,
                                      Collective::kAllGather, "ncclAllGather of f32 over the case's ranks")),
      nccl_collective(Method::kNcclAllReduce, "nccl_all_reduce", "NCCL all-reduce", 32, Collective::kAllReduce,
                      "ncclAllReduce of f32 (sum) over the case's ranks"),
      host_chase(),
      beside_workload(nccl_collective(Method::kNcclAllToAll, "nccl_all_to_all", "NCCL all-to-all", 33,
                                      Collective::kAllToAll,
                                      "all-to-all of f32 as NCCL does it: a group of ncclSend/ncclRecv, a chunk to "
                                      "and from each peer")),
  };
  return methods;
}

}  // namespace

SweptAxis blocks_axis(uint64_t default_blocks, const char* help) {
  return {ShapeAxis::kBlocks, {default_blocks}, any_block_count, "blocks must be 1..65535", help};
}

SweptAxis unroll_axis(uint64_t default_unroll, const char* help) {
  return {ShapeAxis::kUnroll, {default_unroll}, unroll_choice, "unroll must be 1, 2, 4 or 8", help};
}

SweptAxis threads_axis(uint64_t default_threads, const char* help) {
  return {ShapeAxis::kThreads, {default_threads}, whole_warps,
          "threads per block must be a multiple of 32 (whole warps) from 32 to 1024", help};
}

std::vector<std::string> axes_of(Method m) {
  std::vector<std::string> names;
  for (const SweptAxis& a : method_info(m).swept) names.push_back(to_string(a.axis));
  for (ShapeAxis a : method_info(m).own_axes) names.push_back(to_string(a));
  return names;
}

const std::vector<MethodInfo>& method_registry() { return table(); }

Method registered_method_id(int order) { return static_cast<Method>(kFirstRegisteredId + order); }

Method register_method(MethodInfo info) {
  if (parse_method(info.name)) throw std::logic_error(std::string("method name registered twice: ") + info.name);
  if (info.report_order < 0) throw std::logic_error(std::string("method ") + info.name + ": report_order must be >= 0");
  for (const MethodInfo& m : table())
    if (m.report_order == info.report_order)
      throw std::logic_error(std::string("methods ") + m.name + " and " + info.name + " have one report_order, " +
                             std::to_string(m.report_order));
  const Method id = info.id = registered_method_id(info.report_order);
  // In id order, which is report order, whichever file's registration runs first.
  std::vector<MethodInfo>& methods = table();
  const auto place = std::upper_bound(methods.begin() + kBuiltInMethods, methods.end(), id,
                                      [](Method a, const MethodInfo& m) { return a < m.id; });
  methods.insert(place, std::move(info));
  return id;
}

const SweptAxis* swept_axis(Method m, ShapeAxis a) {
  for (const SweptAxis& s : method_info(m).swept)
    if (s.axis == a) return &s;
  return nullptr;
}

const MethodInfo& method_info(Method m) {
  const std::vector<MethodInfo>& methods = table();
  if (static_cast<size_t>(m) < kBuiltInMethods) return methods[static_cast<size_t>(m)];
  const auto it = std::lower_bound(methods.begin() + kBuiltInMethods, methods.end(), m,
                                   [](const MethodInfo& info, Method id) { return info.id < id; });
  if (it == methods.end() || it->id != m)
    throw std::out_of_range("no method of id " + std::to_string(static_cast<int>(m)) + " is registered");
  return *it;
}

const char* to_string(Method m) { return method_info(m).name; }

std::optional<Method> parse_method(const std::string& s) {
  for (const MethodInfo& m : table())
    if (s == m.name) return m.id;
  return std::nullopt;
}

std::vector<std::string> method_names() {
  std::vector<std::string> names;
  for (const MethodInfo& m : table()) names.push_back(m.name);
  return names;
}

std::string method_list(bool (*keep)(const MethodInfo&)) {
  std::string list;
  for (const MethodInfo& m : table())
    if (keep(m)) list += (list.empty() ? "" : ", ") + std::string(m.name);
  return list;
}

const char* to_string(MethodKind k) {
  switch (k) {
    case MethodKind::kCopy: return "copy";
    case MethodKind::kHostLink: return "host_link";
    case MethodKind::kLocal: return "local";
    case MethodKind::kTwoSidedBaseline: return "two_sided_baseline";
    case MethodKind::kLatency: return "latency";
    case MethodKind::kAtomic: return "atomic";
    case MethodKind::kInterference: return "interference";
    case MethodKind::kCollective: return "collective";
  }
  return "?";
}

}  // namespace p2pbench
