// One benchmark case: every independent variable of a result row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace p2pbench {

enum class Method { kCe, kLdst, kTma, kH2d, kD2h, kStaged, kNccl, kLatencySignal, kLatencyRead, kLatencyCe, kAtomic,
                    kInterference /* issue 13: a transfer engine beside a workload; the engine is a field */ };

// Methods whose figure is a latency (latency_us), not a bandwidth.
inline bool is_latency(Method m) {
  return m == Method::kLatencySignal || m == Method::kLatencyRead || m == Method::kLatencyCe;
}

// Interference cases (issue 13): measured by the InterferenceRunner, the engine in CaseSpec::engine.
inline bool is_interference(Method m) { return m == Method::kInterference; }

// Host-link methods measure one GPU and pinned host memory: their cases run r -> r.
inline bool is_host_link(Method m) { return m == Method::kH2d || m == Method::kD2h; }
// Baselines that involve both ends by nature (no push/pull distinction): recorded as push.
inline bool is_two_sided_baseline(Method m) { return m == Method::kStaged || m == Method::kNccl; }
// Whether the method reads or writes the peer's memory through its IPC mapping (everything but
// the host link and the baselines, which is what still runs where peer access is impossible).
inline bool needs_peer_mapping(Method m) {
  return !(is_host_link(m) || is_two_sided_baseline(m));
}
enum class Direction { kPush, kPull };
enum class Mode { kUni, kBidir };

// Which flows a case runs at once (issue 11). Every pattern is a set of concurrent flows
// released by one start gate; see docs/groups.md.
//   matrix      one pair at a time (uni: one flow; bidir: the pair's two flows): the N x N matrix
//   sampled     the matrix restricted to k seeded random peers per rank
//   one_to_all, all_to_one, all_to_all, ring (shift k), bisection (first half <-> second half)
//   flows       an explicit list from the config
enum class Pattern { kMatrix, kSampled, kOneToAll, kAllToOne, kAllToAll, kRing, kBisection, kFlows };
// How the matrix is measured: one pair at a time, in rounds of disjoint pairs, or (the check
// of the rounds) a sample of pairs re-measured alone.
enum class Schedule { kSequential, kRounds, kAloneCheck };

const char* to_string(Method m);
const char* to_string(Direction d);
const char* to_string(Mode m);
const char* to_string(Pattern p);
const char* to_string(Schedule s);
std::optional<Pattern> parse_pattern(const std::string& s);
std::optional<Schedule> parse_schedule(const std::string& s);
std::vector<std::string> pattern_names();
std::optional<Method> parse_method(const std::string& s);
std::optional<Direction> parse_direction(const std::string& s);
std::optional<Mode> parse_mode(const std::string& s);
std::vector<std::string> method_names();

// Which kernel-shape axes a method has (threads/unroll only for ldst; smem/stages only for tma).
struct MethodAxes {
  bool blocks = false;
  bool threads = false;
  bool unroll = false;
  bool smem_bytes = false;
  bool stages = false;
};
MethodAxes axes_of(Method m);

// latency_read: how the pointer chase runs. Each field is a config axis ("latency.read_*");
// the defaults are p2pbench's own method, the alternatives nvbandwidth's (see
// docs/latency-read-vs-nvbandwidth.md).
struct ReadChase {
  std::string load = "relaxed_sys";    // "plain" | "relaxed_sys" | "absolute" | "generic" (the row's protocol)
  std::string launch = "single";       // "single": a grid of one 1-thread block, one launch per sample;
                                       // "every_sm": one 1-thread block per SM, launch k's block k
                                       // chases, a sample = one launch per SM (nvbandwidth)
  std::string timing = "kernel_timer"; // the row's figure: %globaltimer inside the kernel, or
                                       // "events": CUDA events around whole launches (nvbandwidth)
  std::string owner = "idle";          // "busy": the memory's GPU runs a one-thread spin kernel meanwhile
  uint64_t stride_bytes = 128;
  uint64_t loads = 20000;              // dependent loads per launch

  // The row's protocol: the load, then ",key=value" for every field off its default (loads
  // compared with 20000), so variants are distinct cases and the default reads as before.
  std::string protocol() const;
};

// One stream of bytes from a source rank to a destination rank (who drives it: the engine rank
// of the case's direction). Host-link cases have src == dst (the GPU and its host).
struct Flow {
  int src_rank;
  int dst_rank;
  bool operator==(const Flow& o) const { return src_rank == o.src_rank && dst_rank == o.dst_rank; }
  bool operator!=(const Flow& o) const { return !(*this == o); }
};

// Latency under load: the bandwidth flows that run beside a latency case (on the other ranks),
// started before its first sample and still running after its last.
struct LoadSpec {
  Method method = Method::kCe;
  Direction direction = Direction::kPush;
  Pattern pattern = Pattern::kAllToAll;  // how the flows were chosen (recorded)
  uint64_t bytes = 0;                    // one transfer
  std::vector<Flow> flows;
  std::optional<int> blocks, threads, unroll, stages;  // the method's kernel shape
  std::optional<uint64_t> smem_bytes;
};

struct CaseSpec {
  Method method = Method::kCe;
  Direction direction = Direction::kPush;
  Mode mode = Mode::kUni;
  uint64_t bytes = 0;
  // The concurrent flows of the case, released together (uni matrix: one; bidir matrix: the
  // pair both ways; patterns: many).
  std::vector<Flow> flows{{0, 1}};
  Pattern pattern = Pattern::kMatrix;
  std::optional<Schedule> schedule;  // matrix only
  std::optional<int> round;          // schedule rounds: the round's index
  std::optional<int> blocks;
  std::optional<int> threads;
  std::optional<int> unroll;
  std::optional<uint64_t> smem_bytes;
  std::optional<int> stages;
  std::optional<std::string> protocol;  // latency_signal: "flag_in_data" | "payload_then_flag";
                                       // latency_read: "plain" (as nvbandwidth) | "relaxed_sys" (never L1)
                                       // | "absolute" (the reader's own pointers, no add per load)
                                       // | "generic" (absolute, loaded as nvbandwidth: generic ld);
                                       // latency_read variants add ",key=value" (ReadChase)
  std::optional<std::string> atomic_type;     // atomic: "u32", "f32", "f32x4", "f16x2", ...
  std::optional<std::string> atomic_pattern;  // atomic: "distinct" | "hot_spot"
  std::optional<uint64_t> ops_per_thread;     // atomic: operations per thread per launch
  std::optional<uint64_t> hot_addresses;      // atomic hot_spot: addresses all threads share
  std::optional<ReadChase> read_chase;        // latency_read only; bytes = the chain's footprint
  // interference (issue 13): the engine that moves the bytes (ce, ldst, tma), the workload
  // beside it ("gemm", "hbm"), the SMs given to the transfer (0: no partition) and whether the
  // workload runs on both GPUs.
  std::optional<Method> engine;
  std::optional<std::string> workload;
  std::optional<int> sm_partition;
  std::optional<bool> both_gpus_busy;
  std::optional<LoadSpec> load;  // latency methods: measured while these flows run

  // The load's own case (a bandwidth case of its method, flows and size).
  CaseSpec load_case() const;

  // The single flow's ranks, or -1 when the case has several flows.
  int src_rank() const { return flows.size() == 1 ? flows[0].src_rank : -1; }
  int dst_rank() const { return flows.size() == 1 ? flows[0].dst_rank : -1; }
  // "ldst/push/uni/0->1/bytes:1048576/blocks:8/threads:512/unroll:4" - stable, human-readable.
  std::string name() const;
  // Which rank drives the copy for the orientation src->dst (push: src; pull: dst).
  static int engine_rank(Direction d, int src, int dst) { return d == Direction::kPush ? src : dst; }
};

inline const std::vector<Flow>& flows_of(const CaseSpec& c) { return c.flows; }

// Names the config accepts for the method-specific variants.
const std::vector<std::string>& signal_protocol_names();
const std::vector<std::string>& read_load_names();    // plain, relaxed_sys, absolute, generic
const std::vector<std::string>& read_launch_names();  // single, every_sm
const std::vector<std::string>& read_timing_names();  // kernel_timer, events
const std::vector<std::string>& read_owner_names();   // idle, busy
const std::vector<std::string>& atomic_type_names();
const std::vector<std::string>& atomic_pattern_names();
// Bytes one atomic operation of the type adds into (4 or 16).
uint64_t atomic_type_bytes(const std::string& type);

}  // namespace p2pbench
