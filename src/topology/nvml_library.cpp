#include "topology/nvml_library.hpp"

#include <dlfcn.h>

#include "common/library_symbol.hpp"

namespace p2pbench {

namespace {

NvmlApi load_api(void* h) {
  NvmlApi a;
  load_symbol(h, a.Init_v2, "nvmlInit_v2");
  load_symbol(h, a.Shutdown, "nvmlShutdown");
  load_symbol(h, a.ErrorString, "nvmlErrorString");
  load_symbol(h, a.SystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  load_symbol(h, a.DeviceGetCount_v2, "nvmlDeviceGetCount_v2");
  load_symbol(h, a.DeviceGetHandleByIndex_v2, "nvmlDeviceGetHandleByIndex_v2");
  load_symbol(h, a.DeviceGetHandleByPciBusId_v2, "nvmlDeviceGetHandleByPciBusId_v2");
  load_symbol(h, a.DeviceGetHandleByUUID, "nvmlDeviceGetHandleByUUID");
  load_symbol(h, a.DeviceGetName, "nvmlDeviceGetName");
  load_symbol(h, a.DeviceGetUUID, "nvmlDeviceGetUUID");
  load_symbol(h, a.DeviceGetPciInfo_v3, "nvmlDeviceGetPciInfo_v3");
  load_symbol(h, a.DeviceGetTopologyCommonAncestor, "nvmlDeviceGetTopologyCommonAncestor");
  load_symbol(h, a.DeviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration");
  load_symbol(h, a.DeviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth");
  load_symbol(h, a.DeviceGetCurrPcieLinkGeneration, "nvmlDeviceGetCurrPcieLinkGeneration");
  load_symbol(h, a.DeviceGetCurrPcieLinkWidth, "nvmlDeviceGetCurrPcieLinkWidth");
  load_symbol(h, a.DeviceGetNvLinkState, "nvmlDeviceGetNvLinkState");
  load_symbol(h, a.DeviceGetNvLinkVersion, "nvmlDeviceGetNvLinkVersion");
  load_symbol(h, a.DeviceGetNvLinkRemotePciInfo_v2, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  load_symbol(h, a.DeviceGetNvLinkRemoteDeviceType, "nvmlDeviceGetNvLinkRemoteDeviceType");
  load_symbol(h, a.DeviceGetNvLinkErrorCounter, "nvmlDeviceGetNvLinkErrorCounter");
  load_symbol(h, a.DeviceGetFieldValues, "nvmlDeviceGetFieldValues");
  load_symbol(h, a.DeviceGetComputeRunningProcesses_v3, "nvmlDeviceGetComputeRunningProcesses_v3");
  load_symbol(h, a.DeviceGetEccMode, "nvmlDeviceGetEccMode");
  load_symbol(h, a.DeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors");
  load_symbol(h, a.DeviceGetMigMode, "nvmlDeviceGetMigMode");
  load_symbol(h, a.DeviceGetClockInfo, "nvmlDeviceGetClockInfo");
  load_symbol(h, a.DeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo");
  // The event-reasons name replaced the throttle-reasons one in driver r535; same function.
  load_symbol(h, a.DeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (a.DeviceGetCurrentClocksEventReasons == nullptr) {
    load_symbol(h, a.DeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  load_symbol(h, a.DeviceGetTemperature, "nvmlDeviceGetTemperature");
  load_symbol(h, a.DeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
  load_symbol(h, a.DeviceGetPersistenceMode, "nvmlDeviceGetPersistenceMode");
  load_symbol(h, a.DeviceGetViolationStatus, "nvmlDeviceGetViolationStatus");
  load_symbol(h, a.DeviceGetGpuFabricInfoV, "nvmlDeviceGetGpuFabricInfoV");
  return a;
}

std::string dl_error() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

}  // namespace

std::variant<NvmlLibrary, std::string> NvmlLibrary::open(const std::string& path) {
  const std::string file = path.empty() ? kDefaultPath : path;
  // RTLD_LOCAL: symbols stay private to this handle (tests load two fake libraries at once).
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return "NVML unavailable: cannot load " + file + ": " + dl_error();
  }
  const NvmlApi api = load_api(handle);
  const char* missing = api.Init_v2 == nullptr       ? "nvmlInit_v2"
                        : api.Shutdown == nullptr    ? "nvmlShutdown"
                        : api.ErrorString == nullptr ? "nvmlErrorString"
                                                     : nullptr;
  if (missing != nullptr) {
    dlclose(handle);
    return "NVML unavailable: " + file + " does not export " + missing;
  }
  const nvml::Return rc = api.Init_v2();
  if (rc != nvml::kSuccess) {
    const char* msg = api.ErrorString(rc);
    std::string reason = "NVML unavailable: nvmlInit_v2 (" + file +
                         ") failed: " + (msg != nullptr ? msg : "error " + std::to_string(rc));
    dlclose(handle);
    return reason;
  }
  return NvmlLibrary(handle, file, api);
}

NvmlLibrary::NvmlLibrary(NvmlLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      path_(std::move(other.path_)),
      api_(other.api_) {}

NvmlLibrary& NvmlLibrary::operator=(NvmlLibrary&& other) noexcept {
  if (this != &other) {
    release();
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
    api_ = other.api_;
  }
  return *this;
}

NvmlLibrary::~NvmlLibrary() { release(); }

void NvmlLibrary::release() noexcept {
  if (handle_ == nullptr) return;
  api_.Shutdown();  // drops our nvmlInit reference; NVML counts them
  dlclose(handle_);
  handle_ = nullptr;
}

std::string NvmlLibrary::error_string(nvml::Return code) const {
  if (code == nvml::kErrorFunctionNotFound) {
    return "Function Not Found (not exported by " + path_ + ")";
  }
  const char* msg = api_.ErrorString(code);
  return msg != nullptr ? msg : "NVML error " + std::to_string(static_cast<int>(code));
}

std::string NvmlLibrary::describe(nvml::Return code, const std::string& what) const {
  return what + ": " + error_string(code);
}

void NvmlLibrary::check(nvml::Return code, const std::string& what) const {
  if (code != nvml::kSuccess) throw NvmlError(code, describe(code, what));
}

}  // namespace p2pbench
