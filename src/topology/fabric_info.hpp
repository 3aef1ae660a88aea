// A GPU's multi-node NVLink fabric registration, read from NVML (nvmlDeviceGetGpuFabricInfoV):
// the cluster UUID and clique id that place it in an NVLink domain with GPUs of other hosts.
#pragma once

#include <string>

#include "common/gpu_fabric.hpp"
#include "topology/nvml_library.hpp"
#include "topology/topology.hpp"

namespace p2pbench {

// The fabric information of `device`; where NVML has none, GpuFabric::unavailable says why
// ("N/A: NVML_ERROR_NOT_SUPPORTED (nvmlDeviceGetGpuFabricInfoV: Not Supported)"). Asks for the
// v3 struct and falls back to v2 on drivers that do not know v3. Never throws.
GpuFabric read_gpu_fabric(const NvmlLibrary& lib, nvml::Device device);
// The same for the GPU CUDA names `id`, opening NVML from `nvml_path` (empty: the driver's).
GpuFabric read_gpu_fabric(const GpuIdentity& id, const std::string& nvml_path = "");

// NVML_GPU_FABRIC_STATE_* as GpuFabric::state spells it.
std::string fabric_state_name(unsigned char state);
// An nvmlReturn_t by its nvml.h name ("NVML_ERROR_NOT_SUPPORTED"), or "nvmlReturn_t <n>".
std::string nvml_return_name(nvml::Return code);

}  // namespace p2pbench
