#include "plan/case_spec.hpp"

namespace p2pbench {

namespace {
template <typename E, size_t N>
std::optional<E> parse_enum(const std::string& s, const char* const (&names)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (s == names[i]) return static_cast<E>(i);
  return std::nullopt;
}
constexpr const char* kMethodNames[] = {"ce",     "ldst",           "tma",          "h2d",        "d2h",   "staged",
                                        "nccl", "latency_signal", "latency_read", "latency_ce", "atomic",
                                        "interference"};
constexpr const char* kDirectionNames[] = {"push", "pull"};
constexpr const char* kModeNames[] = {"uni", "bidir"};
constexpr const char* kPatternNames[] = {"matrix", "sampled", "one_to_all", "all_to_one", "all_to_all", "ring", "bisection", "flows"};
constexpr const char* kScheduleNames[] = {"sequential", "rounds", "alone_check"};
}  // namespace

const char* to_string(Method m) { return kMethodNames[static_cast<int>(m)]; }
const char* to_string(Direction d) { return kDirectionNames[static_cast<int>(d)]; }
const char* to_string(Mode m) { return kModeNames[static_cast<int>(m)]; }
std::optional<Method> parse_method(const std::string& s) { return parse_enum<Method>(s, kMethodNames); }
std::optional<Direction> parse_direction(const std::string& s) {
  return parse_enum<Direction>(s, kDirectionNames);
}
std::optional<Mode> parse_mode(const std::string& s) { return parse_enum<Mode>(s, kModeNames); }
const char* to_string(Pattern p) { return kPatternNames[static_cast<int>(p)]; }
const char* to_string(Schedule s) { return kScheduleNames[static_cast<int>(s)]; }
std::optional<Pattern> parse_pattern(const std::string& s) { return parse_enum<Pattern>(s, kPatternNames); }
std::optional<Schedule> parse_schedule(const std::string& s) { return parse_enum<Schedule>(s, kScheduleNames); }
std::vector<std::string> pattern_names() { return {std::begin(kPatternNames), std::end(kPatternNames)}; }
std::vector<std::string> method_names() { return {std::begin(kMethodNames), std::end(kMethodNames)}; }

MethodAxes axes_of(Method m) {
  switch (m) {
    case Method::kCe: return {};
    case Method::kLdst: return {true, true, true, false, false};
    case Method::kTma: return {true, false, false, true, true};
    case Method::kH2d:
    case Method::kD2h:
    case Method::kAtomic: return {true, true, false, false, false};
    default: return {};
  }
  return {};
}

std::string CaseSpec::name() const {
  std::string n = std::string(to_string(method)) + "/" + to_string(direction) + "/" + to_string(mode);
  // Two-rank matrix cases keep their v1 names; other patterns name themselves and their flows.
  if (pattern != Pattern::kMatrix || (schedule && *schedule != Schedule::kSequential)) {
    n += std::string("/") + to_string(pattern);
    if (schedule) n += std::string(":") + to_string(*schedule);
    if (round) n += "/round:" + std::to_string(*round);
  }
  if (!flows.empty() && (mode == Mode::kUni || pattern != Pattern::kMatrix || flows.size() != 2 || flows[0].src_rank + flows[0].dst_rank != 1)) {
    std::string list;
    for (const Flow& f : flows) list += (list.empty() ? "" : ",") + std::to_string(f.src_rank) + "->" + std::to_string(f.dst_rank);
    n += "/" + list;
  }
  n += "/bytes:" + std::to_string(bytes);
  if (blocks) n += "/blocks:" + std::to_string(*blocks);
  if (threads) n += "/threads:" + std::to_string(*threads);
  if (unroll) n += "/unroll:" + std::to_string(*unroll);
  if (smem_bytes) n += "/smem:" + std::to_string(*smem_bytes);
  if (stages) n += "/stages:" + std::to_string(*stages);
  if (protocol) n += "/protocol:" + *protocol;
  if (atomic_type) n += "/type:" + *atomic_type;
  if (atomic_pattern) n += "/pattern:" + *atomic_pattern;
  if (engine) n += std::string("/engine:") + to_string(*engine);  // interference (issue 13)
  if (workload) n += "/workload:" + *workload;
  if (sm_partition) n += "/partition:" + std::to_string(*sm_partition);
  if (both_gpus_busy && *both_gpus_busy) n += "/both_gpus_busy";
  if (load) n += std::string("/load:") + to_string(load->method) + ":" + to_string(load->pattern);
  return n;
}


CaseSpec CaseSpec::load_case() const {
  CaseSpec c;
  if (!load) return c;
  c.method = load->method;
  c.direction = load->direction;
  c.bytes = load->bytes;
  c.flows = load->flows;
  c.pattern = load->pattern;
  c.blocks = load->blocks;
  c.threads = load->threads;
  c.unroll = load->unroll;
  c.stages = load->stages;
  c.smem_bytes = load->smem_bytes;
  return c;
}

const std::vector<std::string>& signal_protocol_names() {
  static const std::vector<std::string> names = {"flag_in_data", "payload_then_flag"};
  return names;
}

const std::vector<std::string>& read_load_names() {
  static const std::vector<std::string> names = {"plain", "relaxed_sys", "absolute", "generic"};
  return names;
}

const std::vector<std::string>& read_launch_names() {
  static const std::vector<std::string> names = {"single", "every_sm"};
  return names;
}

const std::vector<std::string>& read_timing_names() {
  static const std::vector<std::string> names = {"kernel_timer", "events"};
  return names;
}

const std::vector<std::string>& read_owner_names() {
  static const std::vector<std::string> names = {"idle", "busy"};
  return names;
}

std::string ReadChase::protocol() const {
  const ReadChase d;
  std::string p = load;
  if (launch != d.launch) p += ",launch=" + launch;
  if (timing != d.timing) p += ",timing=" + timing;
  if (owner != d.owner) p += ",owner=" + owner;
  if (stride_bytes != d.stride_bytes) p += ",stride=" + std::to_string(stride_bytes);
  if (loads != d.loads) p += ",loads=" + std::to_string(loads);
  return p;
}

const std::vector<std::string>& atomic_type_names() {
  static const std::vector<std::string> names = {"u32", "f32", "f32x4", "f16x2", "bf16x2", "f16x8", "bf16x8"};
  return names;
}

const std::vector<std::string>& atomic_pattern_names() {
  static const std::vector<std::string> names = {"distinct", "hot_spot"};
  return names;
}

uint64_t atomic_type_bytes(const std::string& type) {
  return (type == "f32x4" || type == "f16x8" || type == "bf16x8") ? 16 : 4;
}

}  // namespace p2pbench
