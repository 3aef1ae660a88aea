// `p2pbench --topology`: what NVML sees, for a person checking a node before a run.
#pragma once

#include <ostream>
#include <string>

namespace p2pbench {

// Prints (a) the GPUs (NVML index, name, PCI bus id, UUID), (b) a link matrix labelled as
// `nvidia-smi topo -m` does (NV18, PIX, ...), (c) each pair's peak GB/s per direction with its
// source and (d) link health. Opens NVML from `nvml_path` (empty: libnvidia-ml.so.1).
// Returns 0, or 1 after printing "NVML unavailable: <reason>" with what to try next, or the failed query.
int print_topology(std::ostream& out, const std::string& nvml_path);

}  // namespace p2pbench
