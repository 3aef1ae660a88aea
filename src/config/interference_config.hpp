// The "interference" section of the config: which workloads run beside which
// transfer engines, the GEMM's shape, the SM partitions swept, and whether both GPUs compute.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vocab/flows.hpp"
#include "vocab/methods.hpp"
#include "vocab/variants.hpp"

namespace p2pbench {

struct GemmShape {
  uint64_t m = 8192;
  uint64_t n = 8192;
  uint64_t k = 8192;
  // What the operands hold (vocab/variants.hpp gemm_operand_names): "gaussian" (full entropy, as a
  // model's activations and weights) or "eighths" (17 values, low entropy: the GEMM runs faster).
  std::string operands = "gaussian";
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

// The methods that may run beside another case (MethodInfo::runs_as_load), in the registry's order.
std::vector<Method> load_methods();

// The workload that is a GEMM (the interference section's "gemm", not the method of that name).
inline constexpr const char* kGemmWorkload = "gemm";

// Launches of a transfer (or workload) in one phase of an interference sample, at most: behind
// the phase's closed gate the launch queue must never fill. A phase of short transfers lasts
// less than min_sample_time for it.
inline constexpr uint64_t kInterferenceMaxLaunches = 256;

struct InterferenceSettings {
  std::vector<std::string> workloads{kGemmWorkload, "hbm"};
  GemmShape gemm;
  uint64_t hbm_bytes = 1ull << 30;  // bytes the memory-bound kernel copies per launch
  std::vector<Method> engines = load_methods();  // the default: every method that may run as a load
  // SMs given to the transfer's green context; 0 = no partition (the workload and the transfer
  // share every SM). An engine that takes no SMs (the copy engine) runs only unpartitioned.
  std::vector<uint64_t> sm_partitions{0, 4, 8, 16, 32, 66};
  bool both_gpus_busy = false;
  // The unpartitioned transfer's streams at the device's highest priority: the block scheduler
  // then gives a transfer kernel the next free SM before the workload's next block (SMs shared
  // with the workload only; a partitioned transfer has SMs of its own).
  bool transfer_high_priority = false;

  nlohmann::json to_json() const;
};

// Names the workloads the section accepts.
const std::vector<std::string>& workload_names();
// Names the engines it accepts (may_run_beside_workload), in the registry's order.
std::vector<std::string> engine_names();

// Parses `section` (the value of the "interference" key) into `out`. `name` turns a key path
// ("interference.gemm.m") into the name the user wrote (with the flag it came from).
// Throws InputError naming the key and the value.
void parse_interference_section(const nlohmann::json& section, const std::function<std::string(const std::string&)>& name,
                                InterferenceSettings& out);

}  // namespace p2pbench
