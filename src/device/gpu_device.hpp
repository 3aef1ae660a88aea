// GPU selection and description for one rank.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace p2pbench {

struct GpuInfo {
  int device_index = -1;
  std::string name, uuid, pci_bus_id;  // uuid as "GPU-xxxxxxxx-...", bus id as "0000:00:06.0"
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  size_t memory_bytes = 0, l2_bytes = 0;
  double max_sm_clock_mhz = 0, max_mem_clock_mhz = 0;
  double observed_sm_clock_mhz = 0;  // measured with a busy kernel at start-up (0: not measured)
  // An MPS control daemon is where this process's CUDA looks for one: its kernels then run at
  // once with other processes' on the GPU instead of taking turns.
  bool mps = false;
  nlohmann::json to_json(int rank) const;
};

// The device this rank uses: `spec` is an index, a UUID ("GPU-..."), or a PCI bus id; empty
// means the node-local rank modulo the visible device count. Throws InputError for a spec
// that matches no visible device.
int select_device(const std::string& spec, int local_rank);

GpuInfo describe_device(int device);

// Runs a busy kernel for ~2 ms and returns the SM clock it ran at, in MHz.
double measure_sm_clock_mhz();

}  // namespace p2pbench
