// Compile-time proof that src/topology/nvml_api.hpp matches the real nvml.h: the values, struct
// layouts and function shapes we declare ourselves. Compiled (never run) wherever nvml.h is on
// the include path (CUDA on the GPU nodes); an empty file elsewhere.
#if __has_include(<nvml.h>)

#include <nvml.h>

#include <cstddef>
#include <type_traits>

#include "topology/nvml_api.hpp"

namespace n = p2pbench::nvml;

#define P2P_SAME_VALUE(ours, theirs)                                            \
  static_assert(static_cast<long long>(ours) == static_cast<long long>(theirs), \
                #ours " != " #theirs)

P2P_SAME_VALUE(n::kSuccess, NVML_SUCCESS);
P2P_SAME_VALUE(n::kErrorUninitialized, NVML_ERROR_UNINITIALIZED);
P2P_SAME_VALUE(n::kErrorInvalidArgument, NVML_ERROR_INVALID_ARGUMENT);
P2P_SAME_VALUE(n::kErrorNotSupported, NVML_ERROR_NOT_SUPPORTED);
P2P_SAME_VALUE(n::kErrorNoPermission, NVML_ERROR_NO_PERMISSION);
P2P_SAME_VALUE(n::kErrorNotFound, NVML_ERROR_NOT_FOUND);
P2P_SAME_VALUE(n::kErrorInsufficientSize, NVML_ERROR_INSUFFICIENT_SIZE);
P2P_SAME_VALUE(n::kErrorDriverNotLoaded, NVML_ERROR_DRIVER_NOT_LOADED);
P2P_SAME_VALUE(n::kErrorFunctionNotFound, NVML_ERROR_FUNCTION_NOT_FOUND);
P2P_SAME_VALUE(n::kErrorGpuIsLost, NVML_ERROR_GPU_IS_LOST);
P2P_SAME_VALUE(n::kErrorUnknown, NVML_ERROR_UNKNOWN);
P2P_SAME_VALUE(n::kFeatureDisabled, NVML_FEATURE_DISABLED);
P2P_SAME_VALUE(n::kFeatureEnabled, NVML_FEATURE_ENABLED);
P2P_SAME_VALUE(n::kDlReplay, NVML_NVLINK_ERROR_DL_REPLAY);
P2P_SAME_VALUE(n::kDlRecovery, NVML_NVLINK_ERROR_DL_RECOVERY);
P2P_SAME_VALUE(n::kDlCrcFlit, NVML_NVLINK_ERROR_DL_CRC_FLIT);
P2P_SAME_VALUE(n::kDlCrcData, NVML_NVLINK_ERROR_DL_CRC_DATA);
P2P_SAME_VALUE(n::kDlEccData, NVML_NVLINK_ERROR_DL_ECC_DATA);
P2P_SAME_VALUE(n::kNvLinkDeviceGpu, NVML_NVLINK_DEVICE_TYPE_GPU);
P2P_SAME_VALUE(n::kNvLinkDeviceIbmNpu, NVML_NVLINK_DEVICE_TYPE_IBMNPU);
P2P_SAME_VALUE(n::kNvLinkDeviceSwitch, NVML_NVLINK_DEVICE_TYPE_SWITCH);
P2P_SAME_VALUE(n::kNvLinkDeviceUnknown, NVML_NVLINK_DEVICE_TYPE_UNKNOWN);
P2P_SAME_VALUE(n::kTopologyInternal, NVML_TOPOLOGY_INTERNAL);
P2P_SAME_VALUE(n::kTopologySingle, NVML_TOPOLOGY_SINGLE);
P2P_SAME_VALUE(n::kTopologyMultiple, NVML_TOPOLOGY_MULTIPLE);
P2P_SAME_VALUE(n::kTopologyHostbridge, NVML_TOPOLOGY_HOSTBRIDGE);
P2P_SAME_VALUE(n::kTopologyNode, NVML_TOPOLOGY_NODE);
P2P_SAME_VALUE(n::kTopologySystem, NVML_TOPOLOGY_SYSTEM);
P2P_SAME_VALUE(n::kMemoryErrorCorrected, NVML_MEMORY_ERROR_TYPE_CORRECTED);
P2P_SAME_VALUE(n::kMemoryErrorUncorrected, NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
P2P_SAME_VALUE(n::kVolatileEcc, NVML_VOLATILE_ECC);
P2P_SAME_VALUE(n::kAggregateEcc, NVML_AGGREGATE_ECC);
P2P_SAME_VALUE(n::kClockGraphics, NVML_CLOCK_GRAPHICS);
P2P_SAME_VALUE(n::kClockSm, NVML_CLOCK_SM);
P2P_SAME_VALUE(n::kClockMem, NVML_CLOCK_MEM);
P2P_SAME_VALUE(n::kClockVideo, NVML_CLOCK_VIDEO);
P2P_SAME_VALUE(n::kTemperatureGpu, NVML_TEMPERATURE_GPU);
P2P_SAME_VALUE(n::kPerfPolicyPower, NVML_PERF_POLICY_POWER);
P2P_SAME_VALUE(n::kPerfPolicyThermal, NVML_PERF_POLICY_THERMAL);
P2P_SAME_VALUE(n::kPerfPolicySyncBoost, NVML_PERF_POLICY_SYNC_BOOST);
P2P_SAME_VALUE(n::kPerfPolicyBoardLimit, NVML_PERF_POLICY_BOARD_LIMIT);
P2P_SAME_VALUE(n::kPerfPolicyLowUtilization, NVML_PERF_POLICY_LOW_UTILIZATION);
P2P_SAME_VALUE(n::kPerfPolicyReliability, NVML_PERF_POLICY_RELIABILITY);
P2P_SAME_VALUE(n::kValueDouble, NVML_VALUE_TYPE_DOUBLE);
P2P_SAME_VALUE(n::kValueUnsignedInt, NVML_VALUE_TYPE_UNSIGNED_INT);
P2P_SAME_VALUE(n::kValueUnsignedLong, NVML_VALUE_TYPE_UNSIGNED_LONG);
P2P_SAME_VALUE(n::kValueUnsignedLongLong, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
P2P_SAME_VALUE(n::kValueSignedLongLong, NVML_VALUE_TYPE_SIGNED_LONG_LONG);
P2P_SAME_VALUE(n::kValueSignedInt, NVML_VALUE_TYPE_SIGNED_INT);
P2P_SAME_VALUE(n::kPciBusIdBufferSize, NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);
P2P_SAME_VALUE(n::kPciBusIdBufferV2Size, NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);
P2P_SAME_VALUE(n::kDeviceUuidBufferSize, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
P2P_SAME_VALUE(n::kDeviceNameBufferSize, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
P2P_SAME_VALUE(n::kDriverVersionBufferSize, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
P2P_SAME_VALUE(n::kDeviceMigDisable, NVML_DEVICE_MIG_DISABLE);
P2P_SAME_VALUE(n::kDeviceMigEnable, NVML_DEVICE_MIG_ENABLE);
P2P_SAME_VALUE(n::kValueNotAvailable, static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));
P2P_SAME_VALUE(n::kFiNvLinkSpeedMbpsCommon, NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON);
P2P_SAME_VALUE(n::kFiNvLinkGetSpeed, NVML_FI_DEV_NVLINK_GET_SPEED);
P2P_SAME_VALUE(n::kClocksEventGpuIdle, nvmlClocksThrottleReasonGpuIdle);
P2P_SAME_VALUE(n::kClocksEventApplicationsClocksSetting,
               nvmlClocksThrottleReasonApplicationsClocksSetting);
P2P_SAME_VALUE(n::kClocksEventSwPowerCap, nvmlClocksThrottleReasonSwPowerCap);
P2P_SAME_VALUE(n::kClocksEventHwSlowdown, nvmlClocksThrottleReasonHwSlowdown);
P2P_SAME_VALUE(n::kClocksEventSyncBoost, nvmlClocksThrottleReasonSyncBoost);
P2P_SAME_VALUE(n::kClocksEventSwThermalSlowdown, nvmlClocksThrottleReasonSwThermalSlowdown);
P2P_SAME_VALUE(n::kClocksEventHwThermalSlowdown, nvmlClocksThrottleReasonHwThermalSlowdown);
P2P_SAME_VALUE(n::kClocksEventHwPowerBrakeSlowdown, nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
P2P_SAME_VALUE(n::kClocksEventDisplayClockSetting, nvmlClocksThrottleReasonDisplayClockSetting);
#ifdef nvmlClocksEventReasonBoardLimit  // CUDA 13 headers on
P2P_SAME_VALUE(n::kClocksEventBoardLimit, nvmlClocksEventReasonBoardLimit);
P2P_SAME_VALUE(n::kClocksEventReliability, nvmlClocksEventReasonReliability);
#endif

// NVML_NVLINK_MAX_LINKS grew from 18 (CUDA 12) to 36 (CUDA 13): we iterate to the larger bound.
static_assert(n::kNvLinkMaxLinks >= NVML_NVLINK_MAX_LINKS, "raise kNvLinkMaxLinks");

// NVML_VALUE_TYPE_UNSIGNED_SHORT first appeared in the CUDA 12.6 header, with this field id.
#ifdef NVML_FI_DEV_NVLINK_COUNT_XMIT_BYTES
P2P_SAME_VALUE(n::kValueUnsignedShort, NVML_VALUE_TYPE_UNSIGNED_SHORT);
#endif

// nvmlNvlinkVersion_t first appeared in the CUDA 12.8 header, together with this field id.
#ifdef NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
P2P_SAME_VALUE(n::kNvLinkVersion1_0, NVML_NVLINK_VERSION_1_0);
P2P_SAME_VALUE(n::kNvLinkVersion2_0, NVML_NVLINK_VERSION_2_0);
P2P_SAME_VALUE(n::kNvLinkVersion2_2, NVML_NVLINK_VERSION_2_2);
P2P_SAME_VALUE(n::kNvLinkVersion3_0, NVML_NVLINK_VERSION_3_0);
P2P_SAME_VALUE(n::kNvLinkVersion3_1, NVML_NVLINK_VERSION_3_1);
P2P_SAME_VALUE(n::kNvLinkVersion4_0, NVML_NVLINK_VERSION_4_0);
P2P_SAME_VALUE(n::kNvLinkVersion5_0, NVML_NVLINK_VERSION_5_0);
#endif

#define P2P_SAME_MEMBER(ours, theirs, member)                         \
  static_assert(offsetof(ours, member) == offsetof(theirs, member) && \
                    sizeof(ours::member) == sizeof(theirs::member),   \
                #ours "::" #member " differs from " #theirs)

static_assert(sizeof(n::PciInfo) == sizeof(nvmlPciInfo_t) &&
              alignof(n::PciInfo) == alignof(nvmlPciInfo_t));
P2P_SAME_MEMBER(n::PciInfo, nvmlPciInfo_t, busIdLegacy);
P2P_SAME_MEMBER(n::PciInfo, nvmlPciInfo_t, domain);
P2P_SAME_MEMBER(n::PciInfo, nvmlPciInfo_t, bus);
P2P_SAME_MEMBER(n::PciInfo, nvmlPciInfo_t, device);
P2P_SAME_MEMBER(n::PciInfo, nvmlPciInfo_t, pciDeviceId);
P2P_SAME_MEMBER(n::PciInfo, nvmlPciInfo_t, pciSubSystemId);
P2P_SAME_MEMBER(n::PciInfo, nvmlPciInfo_t, busId);

static_assert(sizeof(n::Value) == sizeof(nvmlValue_t) && alignof(n::Value) == alignof(nvmlValue_t));
static_assert(sizeof(n::FieldValue) == sizeof(nvmlFieldValue_t) &&
              alignof(n::FieldValue) == alignof(nvmlFieldValue_t));
P2P_SAME_MEMBER(n::FieldValue, nvmlFieldValue_t, fieldId);
P2P_SAME_MEMBER(n::FieldValue, nvmlFieldValue_t, scopeId);
P2P_SAME_MEMBER(n::FieldValue, nvmlFieldValue_t, timestamp);
P2P_SAME_MEMBER(n::FieldValue, nvmlFieldValue_t, latencyUsec);
P2P_SAME_MEMBER(n::FieldValue, nvmlFieldValue_t, valueType);
P2P_SAME_MEMBER(n::FieldValue, nvmlFieldValue_t, nvmlReturn);
P2P_SAME_MEMBER(n::FieldValue, nvmlFieldValue_t, value);

static_assert(sizeof(n::ProcessInfo) == sizeof(nvmlProcessInfo_t) &&
              alignof(n::ProcessInfo) == alignof(nvmlProcessInfo_t));
P2P_SAME_MEMBER(n::ProcessInfo, nvmlProcessInfo_t, pid);
P2P_SAME_MEMBER(n::ProcessInfo, nvmlProcessInfo_t, usedGpuMemory);
P2P_SAME_MEMBER(n::ProcessInfo, nvmlProcessInfo_t, gpuInstanceId);
P2P_SAME_MEMBER(n::ProcessInfo, nvmlProcessInfo_t, computeInstanceId);

static_assert(sizeof(n::ViolationTime) == sizeof(nvmlViolationTime_t) &&
              alignof(n::ViolationTime) == alignof(nvmlViolationTime_t));
P2P_SAME_MEMBER(n::ViolationTime, nvmlViolationTime_t, referenceTime);
P2P_SAME_MEMBER(n::ViolationTime, nvmlViolationTime_t, violationTime);

// Function shapes: same arity, same size of every argument and of what pointer arguments point
// to (opaque handles excepted), same return size. Catches a missing or mistyped argument.
namespace abi {
template <typename T, typename = void>
struct Complete : std::false_type {};
template <typename T>
struct Complete<T, std::void_t<decltype(sizeof(T))>> : std::true_type {};

template <typename T>
constexpr std::size_t pointee_size() {
  if constexpr (std::is_pointer_v<T>) {
    using P = std::remove_cv_t<std::remove_pointer_t<T>>;
    if constexpr (!std::is_void_v<P> && Complete<P>::value) return sizeof(P);
  }
  return 0;
}

template <typename Ours, typename Theirs>
struct SameShape : std::false_type {};
template <typename R1, typename... A1, typename R2, typename... A2>
struct SameShape<R1 (*)(A1...), R2 (*)(A2...)> {
  static constexpr bool arity = sizeof...(A1) == sizeof...(A2);
  static constexpr bool args() {
    if constexpr (!arity) {
      return false;
    } else {
      return ((sizeof(A1) == sizeof(A2) && pointee_size<A1>() == pointee_size<A2>()) && ... &&
              true);
    }
  }
  static constexpr bool value = sizeof(R1) == sizeof(R2) && args();
};
}  // namespace abi

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // CUDA 13 deprecates a few we read
#define P2P_SAME_SHAPE(ours, fn)                                 \
  static_assert(abi::SameShape<n::ours, decltype(&::fn)>::value, \
                #fn " signature differs from " #ours)
P2P_SAME_SHAPE(InitFn, nvmlInit_v2);
P2P_SAME_SHAPE(ShutdownFn, nvmlShutdown);
P2P_SAME_SHAPE(ErrorStringFn, nvmlErrorString);
P2P_SAME_SHAPE(SystemGetDriverVersionFn, nvmlSystemGetDriverVersion);
P2P_SAME_SHAPE(DeviceGetCountFn, nvmlDeviceGetCount_v2);
P2P_SAME_SHAPE(DeviceGetHandleByIndexFn, nvmlDeviceGetHandleByIndex_v2);
P2P_SAME_SHAPE(DeviceGetHandleByStringFn, nvmlDeviceGetHandleByPciBusId_v2);
P2P_SAME_SHAPE(DeviceGetHandleByStringFn, nvmlDeviceGetHandleByUUID);
P2P_SAME_SHAPE(DeviceGetStringFn, nvmlDeviceGetName);
P2P_SAME_SHAPE(DeviceGetStringFn, nvmlDeviceGetUUID);
P2P_SAME_SHAPE(DeviceGetPciInfoFn, nvmlDeviceGetPciInfo_v3);
P2P_SAME_SHAPE(DeviceGetTopologyCommonAncestorFn, nvmlDeviceGetTopologyCommonAncestor);
P2P_SAME_SHAPE(DeviceGetUintFn, nvmlDeviceGetMaxPcieLinkGeneration);
P2P_SAME_SHAPE(DeviceGetUintFn, nvmlDeviceGetMaxPcieLinkWidth);
P2P_SAME_SHAPE(DeviceGetUintFn, nvmlDeviceGetCurrPcieLinkGeneration);
P2P_SAME_SHAPE(DeviceGetUintFn, nvmlDeviceGetCurrPcieLinkWidth);
P2P_SAME_SHAPE(DeviceGetNvLinkStateFn, nvmlDeviceGetNvLinkState);
P2P_SAME_SHAPE(DeviceGetNvLinkVersionFn, nvmlDeviceGetNvLinkVersion);
P2P_SAME_SHAPE(DeviceGetNvLinkRemotePciInfoFn, nvmlDeviceGetNvLinkRemotePciInfo_v2);
P2P_SAME_SHAPE(DeviceGetNvLinkRemoteDeviceTypeFn, nvmlDeviceGetNvLinkRemoteDeviceType);
P2P_SAME_SHAPE(DeviceGetNvLinkErrorCounterFn, nvmlDeviceGetNvLinkErrorCounter);
P2P_SAME_SHAPE(DeviceGetFieldValuesFn, nvmlDeviceGetFieldValues);
P2P_SAME_SHAPE(DeviceGetComputeRunningProcessesFn, nvmlDeviceGetComputeRunningProcesses_v3);
P2P_SAME_SHAPE(DeviceGetEccModeFn, nvmlDeviceGetEccMode);
P2P_SAME_SHAPE(DeviceGetTotalEccErrorsFn, nvmlDeviceGetTotalEccErrors);
P2P_SAME_SHAPE(DeviceGetMigModeFn, nvmlDeviceGetMigMode);
P2P_SAME_SHAPE(DeviceGetClockFn, nvmlDeviceGetClockInfo);
P2P_SAME_SHAPE(DeviceGetClockFn, nvmlDeviceGetMaxClockInfo);
P2P_SAME_SHAPE(DeviceGetUllFn, nvmlDeviceGetCurrentClocksEventReasons);
P2P_SAME_SHAPE(DeviceGetUllFn, nvmlDeviceGetCurrentClocksThrottleReasons);
P2P_SAME_SHAPE(DeviceGetTemperatureFn, nvmlDeviceGetTemperature);
P2P_SAME_SHAPE(DeviceGetUintFn, nvmlDeviceGetPowerUsage);
P2P_SAME_SHAPE(DeviceGetEnableStateFn, nvmlDeviceGetPersistenceMode);
P2P_SAME_SHAPE(DeviceGetViolationStatusFn, nvmlDeviceGetViolationStatus);
#pragma GCC diagnostic pop

// The fabric registration structs (nvmlDeviceGetGpuFabricInfoV; its declared shape takes the
// newest struct, ours a void*, so only the layouts are compared).
#ifdef nvmlGpuFabricInfo_v3
P2P_SAME_VALUE(n::kErrorArgumentVersionMismatch, NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
P2P_SAME_VALUE(n::kGpuFabricUuidLen, NVML_GPU_FABRIC_UUID_LEN);
P2P_SAME_VALUE(n::kFabricStateNotSupported, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED);
P2P_SAME_VALUE(n::kFabricStateNotStarted, NVML_GPU_FABRIC_STATE_NOT_STARTED);
P2P_SAME_VALUE(n::kFabricStateInProgress, NVML_GPU_FABRIC_STATE_IN_PROGRESS);
P2P_SAME_VALUE(n::kFabricStateCompleted, NVML_GPU_FABRIC_STATE_COMPLETED);
P2P_SAME_VALUE(n::struct_version<n::GpuFabricInfoV2>(2), nvmlGpuFabricInfo_v2);
P2P_SAME_VALUE(n::struct_version<n::GpuFabricInfoV3>(3), nvmlGpuFabricInfo_v3);
static_assert(sizeof(n::GpuFabricInfoV2) == sizeof(nvmlGpuFabricInfo_v2_t));
static_assert(sizeof(n::GpuFabricInfoV3) == sizeof(nvmlGpuFabricInfo_v3_t));
P2P_SAME_MEMBER(n::GpuFabricInfoV3, nvmlGpuFabricInfo_v3_t, version);
P2P_SAME_MEMBER(n::GpuFabricInfoV3, nvmlGpuFabricInfo_v3_t, clusterUuid);
P2P_SAME_MEMBER(n::GpuFabricInfoV3, nvmlGpuFabricInfo_v3_t, status);
P2P_SAME_MEMBER(n::GpuFabricInfoV3, nvmlGpuFabricInfo_v3_t, cliqueId);
P2P_SAME_MEMBER(n::GpuFabricInfoV3, nvmlGpuFabricInfo_v3_t, state);
P2P_SAME_MEMBER(n::GpuFabricInfoV3, nvmlGpuFabricInfo_v3_t, healthMask);
P2P_SAME_MEMBER(n::GpuFabricInfoV3, nvmlGpuFabricInfo_v3_t, healthSummary);
P2P_SAME_MEMBER(n::GpuFabricInfoV2, nvmlGpuFabricInfo_v2_t, healthMask);
#endif

#endif  // __has_include(<nvml.h>)
