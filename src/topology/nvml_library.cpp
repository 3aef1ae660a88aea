#include "topology/nvml_library.hpp"

#include <dlfcn.h>

namespace p2pbench {

namespace {

// Looks up one symbol; leaves `slot` null when the library lacks it.
template <typename Fn>
void load(void* handle, Fn& slot, const char* name) {
  slot = reinterpret_cast<Fn>(dlsym(handle, name));
}

NvmlApi load_api(void* h) {
  NvmlApi a;
  load(h, a.Init_v2, "nvmlInit_v2");
  load(h, a.Shutdown, "nvmlShutdown");
  load(h, a.ErrorString, "nvmlErrorString");
  load(h, a.SystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  load(h, a.DeviceGetCount_v2, "nvmlDeviceGetCount_v2");
  load(h, a.DeviceGetHandleByIndex_v2, "nvmlDeviceGetHandleByIndex_v2");
  load(h, a.DeviceGetHandleByPciBusId_v2, "nvmlDeviceGetHandleByPciBusId_v2");
  load(h, a.DeviceGetHandleByUUID, "nvmlDeviceGetHandleByUUID");
  load(h, a.DeviceGetName, "nvmlDeviceGetName");
  load(h, a.DeviceGetUUID, "nvmlDeviceGetUUID");
  load(h, a.DeviceGetPciInfo_v3, "nvmlDeviceGetPciInfo_v3");
  load(h, a.DeviceGetTopologyCommonAncestor, "nvmlDeviceGetTopologyCommonAncestor");
  load(h, a.DeviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration");
  load(h, a.DeviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth");
  load(h, a.DeviceGetCurrPcieLinkGeneration, "nvmlDeviceGetCurrPcieLinkGeneration");
  load(h, a.DeviceGetCurrPcieLinkWidth, "nvmlDeviceGetCurrPcieLinkWidth");
  load(h, a.DeviceGetNvLinkState, "nvmlDeviceGetNvLinkState");
  load(h, a.DeviceGetNvLinkVersion, "nvmlDeviceGetNvLinkVersion");
  load(h, a.DeviceGetNvLinkRemotePciInfo_v2, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  load(h, a.DeviceGetNvLinkRemoteDeviceType, "nvmlDeviceGetNvLinkRemoteDeviceType");
  load(h, a.DeviceGetNvLinkErrorCounter, "nvmlDeviceGetNvLinkErrorCounter");
  load(h, a.DeviceGetFieldValues, "nvmlDeviceGetFieldValues");
  load(h, a.DeviceGetComputeRunningProcesses_v3, "nvmlDeviceGetComputeRunningProcesses_v3");
  load(h, a.DeviceGetEccMode, "nvmlDeviceGetEccMode");
  load(h, a.DeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors");
  load(h, a.DeviceGetMigMode, "nvmlDeviceGetMigMode");
  load(h, a.DeviceGetClockInfo, "nvmlDeviceGetClockInfo");
  load(h, a.DeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo");
  // The event-reasons name replaced the throttle-reasons one in driver r535; same function.
  load(h, a.DeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (a.DeviceGetCurrentClocksEventReasons == nullptr) {
    load(h, a.DeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  load(h, a.DeviceGetTemperature, "nvmlDeviceGetTemperature");
  load(h, a.DeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
  load(h, a.DeviceGetPersistenceMode, "nvmlDeviceGetPersistenceMode");
  load(h, a.DeviceGetViolationStatus, "nvmlDeviceGetViolationStatus");
  load(h, a.DeviceGetGpuFabricInfoV, "nvmlDeviceGetGpuFabricInfoV");
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
