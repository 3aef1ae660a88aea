// The console header printed before the first table, so that a pasted log identifies the run
// (as nvbandwidth and nccl-tests print theirs): host, each GPU (rank, index, name, PCI bus id,
// UUID, persistence mode, SM and memory clocks current/max), NVIDIA driver, CUDA driver and
// runtime, NCCL, the link between the pair (topology label, link type, peak GB/s per direction),
// CPU binding per rank, config label, verification and samples.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>

namespace p2pbench {

// Prints from a results meta object (src/driver/benchmark_session.cpp builds it): the full meta
// at the end of a run, or the part known at its start (see start_meta in link_health.hpp).
// Missing keys print as "unknown" or are left out with a word saying why; never throws.
void print_run_header(std::FILE* out, const nlohmann::json& meta);

}  // namespace p2pbench
