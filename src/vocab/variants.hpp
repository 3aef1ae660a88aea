// The method-specific variants a config may sweep (latency protocols and read-chase settings,
// atomic types and patterns), with the names the config accepts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace p2pbench {

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

// Names the config accepts for the method-specific variants.
const std::vector<std::string>& signal_protocol_names();
const std::vector<std::string>& gemm_operand_names();
const std::vector<std::string>& read_load_names();    // plain, relaxed_sys, absolute, generic
const std::vector<std::string>& read_launch_names();  // single, every_sm
const std::vector<std::string>& read_timing_names();  // kernel_timer, events
const std::vector<std::string>& read_owner_names();   // idle, busy
const std::vector<std::string>& atomic_type_names();
const std::vector<std::string>& atomic_pattern_names();
// Bytes one atomic operation of the type adds into (4 or 16).
uint64_t atomic_type_bytes(const std::string& type);

}  // namespace p2pbench
