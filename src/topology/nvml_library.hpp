// NVML loaded at run time: binaries must start (and say why NVML is missing) on machines without
// a GPU driver, so nothing links libnvidia-ml directly.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "common/errors.hpp"
#include "topology/nvml_api.hpp"

namespace p2pbench {

// A failed NVML call: "<what was being done>: <nvmlErrorString>".
class NvmlError : public RuntimeFailure {
 public:
  NvmlError(nvml::Return code, const std::string& message) : RuntimeFailure(message), code_(code) {}
  nvml::Return code() const { return code_; }

 private:
  nvml::Return code_;
};

// Function table filled by dlsym. Only init/shutdown/errorString are required; any other entry
// may be null (older driver): NvmlLibrary::call then answers kErrorFunctionNotFound.
struct NvmlApi {
  nvml::InitFn Init_v2 = nullptr;
  nvml::ShutdownFn Shutdown = nullptr;
  nvml::ErrorStringFn ErrorString = nullptr;
  nvml::SystemGetDriverVersionFn SystemGetDriverVersion = nullptr;
  nvml::DeviceGetCountFn DeviceGetCount_v2 = nullptr;
  nvml::DeviceGetHandleByIndexFn DeviceGetHandleByIndex_v2 = nullptr;
  nvml::DeviceGetHandleByStringFn DeviceGetHandleByPciBusId_v2 = nullptr;
  nvml::DeviceGetHandleByStringFn DeviceGetHandleByUUID = nullptr;
  nvml::DeviceGetStringFn DeviceGetName = nullptr;
  nvml::DeviceGetStringFn DeviceGetUUID = nullptr;
  nvml::DeviceGetPciInfoFn DeviceGetPciInfo_v3 = nullptr;
  nvml::DeviceGetTopologyCommonAncestorFn DeviceGetTopologyCommonAncestor = nullptr;
  nvml::DeviceGetUintFn DeviceGetMaxPcieLinkGeneration = nullptr;
  nvml::DeviceGetUintFn DeviceGetMaxPcieLinkWidth = nullptr;
  nvml::DeviceGetUintFn DeviceGetCurrPcieLinkGeneration = nullptr;
  nvml::DeviceGetUintFn DeviceGetCurrPcieLinkWidth = nullptr;
  nvml::DeviceGetNvLinkStateFn DeviceGetNvLinkState = nullptr;
  nvml::DeviceGetNvLinkVersionFn DeviceGetNvLinkVersion = nullptr;
  nvml::DeviceGetNvLinkRemotePciInfoFn DeviceGetNvLinkRemotePciInfo_v2 = nullptr;
  nvml::DeviceGetNvLinkRemoteDeviceTypeFn DeviceGetNvLinkRemoteDeviceType = nullptr;
  nvml::DeviceGetNvLinkErrorCounterFn DeviceGetNvLinkErrorCounter = nullptr;
  nvml::DeviceGetFieldValuesFn DeviceGetFieldValues = nullptr;
  nvml::DeviceGetComputeRunningProcessesFn DeviceGetComputeRunningProcesses_v3 = nullptr;
  nvml::DeviceGetEccModeFn DeviceGetEccMode = nullptr;
  nvml::DeviceGetTotalEccErrorsFn DeviceGetTotalEccErrors = nullptr;
  nvml::DeviceGetMigModeFn DeviceGetMigMode = nullptr;
  nvml::DeviceGetClockFn DeviceGetClockInfo = nullptr;
  nvml::DeviceGetClockFn DeviceGetMaxClockInfo = nullptr;
  // nvmlDeviceGetCurrentClocksEventReasons, or the older ...ThrottleReasons (same signature).
  nvml::DeviceGetUllFn DeviceGetCurrentClocksEventReasons = nullptr;
  nvml::DeviceGetTemperatureFn DeviceGetTemperature = nullptr;
  nvml::DeviceGetUintFn DeviceGetPowerUsage = nullptr;
  nvml::DeviceGetEnableStateFn DeviceGetPersistenceMode = nullptr;
  nvml::DeviceGetViolationStatusFn DeviceGetViolationStatus = nullptr;
  nvml::DeviceGetGpuFabricInfoVFn DeviceGetGpuFabricInfoV = nullptr;  // r550 on
};

// A query result that is either a value or the reason it is missing ("<call>: <NVML message>").
template <typename T>
struct Queried {
  std::optional<T> value;
  std::string reason;
  explicit operator bool() const { return value.has_value(); }
};

// Owns the dlopen handle and one nvmlInit_v2 reference; the destructor shuts NVML down and
// closes the library. Move-only.
class NvmlLibrary {
 public:
  static constexpr const char* kDefaultPath = "libnvidia-ml.so.1";

  // Loads `path` (empty: the driver's libnvidia-ml.so.1) and initialises NVML. On failure the
  // string says "NVML unavailable: <reason>"; nothing throws or exits.
  static std::variant<NvmlLibrary, std::string> open(const std::string& path = "");

  NvmlLibrary(NvmlLibrary&& other) noexcept;
  NvmlLibrary& operator=(NvmlLibrary&& other) noexcept;
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary();

  const NvmlApi& api() const { return api_; }
  const std::string& path() const { return path_; }

  // Calls an optional entry of the table; a missing symbol reads as kErrorFunctionNotFound.
  template <typename Fn, typename... Args>
  nvml::Return call(Fn fn, Args... args) const {
    return fn == nullptr ? nvml::kErrorFunctionNotFound : fn(args...);
  }

  // Calls fn(args..., &out): the value, or the reason "<what>: <NVML message>".
  template <typename T, typename Fn, typename... Args>
  Queried<T> query(const std::string& what, Fn fn, Args... args) const {
    T out{};
    const nvml::Return rc = call(fn, args..., &out);
    if (rc == nvml::kSuccess) return {out, {}};
    return {std::nullopt, describe(rc, what)};
  }

  std::string error_string(nvml::Return code) const;
  // "<what>: <nvmlErrorString(code)>"
  std::string describe(nvml::Return code, const std::string& what) const;
  // Throws NvmlError(describe(code, what)) unless code is kSuccess.
  void check(nvml::Return code, const std::string& what) const;

 private:
  NvmlLibrary(void* handle, std::string path, const NvmlApi& api)
      : handle_(handle), path_(std::move(path)), api_(api) {}
  void release() noexcept;

  void* handle_ = nullptr;  // null once moved from
  std::string path_;
  NvmlApi api_;
};

}  // namespace p2pbench
