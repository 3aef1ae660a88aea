#include "topology/fabric_info.hpp"

#include <cstdio>
#include <exception>
#include <variant>

namespace p2pbench {

namespace {

std::string hex_of(const unsigned char* bytes, unsigned n) {
  std::string out;
  char two[3];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(two, sizeof two, "%02x", bytes[i]);
    out += two;
  }
  return out;
}

GpuFabric not_available(const NvmlLibrary& lib, nvml::Return rc) {
  GpuFabric f;
  f.unavailable = "N/A: " + nvml_return_name(rc) + " (" + lib.describe(rc, "nvmlDeviceGetGpuFabricInfoV") + ")";
  return f;
}

template <typename Info>
GpuFabric from_info(const NvmlLibrary& lib, const Info& info) {
  GpuFabric f;
  f.state = fabric_state_name(info.state);
  // NVML defines status only once the registration completed; before, it is not a result.
  f.status = info.state == nvml::kFabricStateCompleted ? nvml_return_name(info.status) : "";
  if (info.state == nvml::kFabricStateCompleted && info.status != nvml::kSuccess)
    f.status += " (" + lib.error_string(info.status) + ")";
  f.cluster_uuid = hex_of(info.clusterUuid, nvml::kGpuFabricUuidLen);
  f.clique_id = info.cliqueId;
  f.health_mask = info.healthMask;
  return f;
}

}  // namespace

std::string fabric_state_name(unsigned char state) {
  switch (state) {
    case nvml::kFabricStateNotSupported: return "not_supported";
    case nvml::kFabricStateNotStarted: return "not_started";
    case nvml::kFabricStateInProgress: return "in_progress";
    case nvml::kFabricStateCompleted: return "completed";
    default: return "state " + std::to_string(unsigned(state));
  }
}

std::string nvml_return_name(nvml::Return code) {
  switch (code) {
    case nvml::kSuccess: return "NVML_SUCCESS";
    case nvml::kErrorUninitialized: return "NVML_ERROR_UNINITIALIZED";
    case nvml::kErrorInvalidArgument: return "NVML_ERROR_INVALID_ARGUMENT";
    case nvml::kErrorNotSupported: return "NVML_ERROR_NOT_SUPPORTED";
    case nvml::kErrorNoPermission: return "NVML_ERROR_NO_PERMISSION";
    case nvml::kErrorNotFound: return "NVML_ERROR_NOT_FOUND";
    case nvml::kErrorInsufficientSize: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case nvml::kErrorDriverNotLoaded: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case nvml::kErrorFunctionNotFound: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case nvml::kErrorGpuIsLost: return "NVML_ERROR_GPU_IS_LOST";
    case nvml::kErrorArgumentVersionMismatch: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case nvml::kErrorUnknown: return "NVML_ERROR_UNKNOWN";
    default: return "nvmlReturn_t " + std::to_string(int(code));
  }
}

GpuFabric read_gpu_fabric(const NvmlLibrary& lib, nvml::Device device) {
  nvml::GpuFabricInfoV3 v3{};
  v3.version = nvml::struct_version<nvml::GpuFabricInfoV3>(3);
  nvml::Return rc = lib.call(lib.api().DeviceGetGpuFabricInfoV, device, static_cast<void*>(&v3));
  if (rc == nvml::kSuccess) return from_info(lib, v3);
  if (rc != nvml::kErrorArgumentVersionMismatch) return not_available(lib, rc);
  nvml::GpuFabricInfoV2 v2{};  // a driver from before v3
  v2.version = nvml::struct_version<nvml::GpuFabricInfoV2>(2);
  rc = lib.call(lib.api().DeviceGetGpuFabricInfoV, device, static_cast<void*>(&v2));
  return rc == nvml::kSuccess ? from_info(lib, v2) : not_available(lib, rc);
}

GpuFabric read_gpu_fabric(const GpuIdentity& id, const std::string& nvml_path) {
  GpuFabric f;
  auto opened = NvmlLibrary::open(nvml_path);
  if (auto* why = std::get_if<std::string>(&opened)) {
    f.unavailable = "N/A: " + *why;
    return f;
  }
  const NvmlLibrary& lib = std::get<NvmlLibrary>(opened);
  try {
    return read_gpu_fabric(lib, resolve_gpu(lib, id).device);
  } catch (const std::exception& e) {
    f.unavailable = std::string("N/A: finding the GPU in NVML: ") + e.what();
    return f;
  }
}

}  // namespace p2pbench
