// One benchmark case: every independent variable of a result row.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vocab/flows.hpp"
#include "vocab/host_memory_kinds.hpp"
#include "vocab/kernel_shape.hpp"
#include "vocab/methods.hpp"
#include "vocab/variants.hpp"

namespace p2pbench {

// Latency under load: the bandwidth flows that run beside a latency case (on the other ranks),
// started before its first sample and still running after its last.
struct LoadSpec : KernelShape {  // the load method's kernel shape
  Method method = kDefaultMethod;
  Direction direction = Direction::kPush;
  Pattern pattern = Pattern::kAllToAll;  // how the flows were chosen (recorded)
  uint64_t bytes = 0;                    // one transfer
  std::vector<Flow> flows;
};

struct CaseSpec : KernelShape {
  Method method = kDefaultMethod;
  Direction direction = Direction::kPush;
  Mode mode = Mode::kUni;
  uint64_t bytes = 0;
  // The concurrent flows of the case, released together (uni matrix: one; bidir matrix: the
  // pair both ways; patterns: many).
  std::vector<Flow> flows{{0, 1}};
  Pattern pattern = Pattern::kMatrix;
  std::optional<Schedule> schedule;  // matrix only
  std::optional<int> round;          // schedule rounds: the round's index
  std::optional<std::string> protocol;  // latency_signal: "flag_in_data" | "payload_then_flag" | "tma_then_flag" | "ce_then_flag";
                                       // latency_read: "plain" (as nvbandwidth) | "relaxed_sys" (never L1)
                                       // | "absolute" (the reader's own pointers, no add per load)
                                       // | "generic" (absolute, loaded as nvbandwidth: generic ld);
                                       // latency_read variants add ",key=value" (ReadChase)
  std::optional<std::string> atomic_type;     // atomic: "u32", "f32", "f32x4", "f16x2", ...
  std::optional<std::string> atomic_pattern;  // atomic: "distinct" | "hot_spot"
  std::optional<uint64_t> ops_per_thread;     // atomic: operations per thread per launch
  std::optional<uint64_t> hot_addresses;      // atomic hot_spot: addresses all threads share
  std::optional<ReadChase> read_chase;        // latency_read only; bytes = the chain's footprint
  // interference: the engine that moves the bytes (ce, ldst, tma), the workload
  // beside it ("gemm", "hbm"), the SMs given to the transfer (0: no partition), whether the
  // workload runs on both GPUs and whether the transfer's streams have the device's highest
  // priority.
  std::optional<Method> engine;
  std::optional<std::string> workload;
  std::optional<int> sm_partition;
  std::optional<bool> both_gpus_busy;
  std::optional<bool> transfer_high_priority;
  // The method whose engine moves the bytes: an interference case's engine, else its own.
  Method transfer_method() const { return engine.value_or(method); }
  std::optional<LoadSpec> load;  // latency methods: measured while these flows run
  // host-link methods: the host buffer's kind and NUMA placement (unset for every other method).
  std::optional<HostMemoryKind> host_memory;
  std::optional<NumaPlacement> host_numa;
  // The settings of the method's own config section (MethodInfo::settings: the gds methods'
  // directory), as the run's config holds them; null for a method without one. A condition of
  // the run, not part of the name.
  nlohmann::json settings;

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

}  // namespace p2pbench
