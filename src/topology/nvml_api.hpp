// The subset of the NVML C API that p2pbench uses, declared here because NVML is loaded at run
// time (dlopen) and the build machines' CUDA may lack nvml.h. Values and layouts mirror nvml.h
// exactly; tests/topology/nvml_abi_check.cpp static_asserts that wherever nvml.h is present.
// Names differ from nvml.h (namespace, k-prefix) so both can be included in one file: many NVML
// names are macros.
#pragma once

namespace p2pbench::nvml {

// nvmlReturn_t (a C enum: int-sized). NVML may return values not listed here.
enum Return : int {
  kSuccess = 0,                 // NVML_SUCCESS
  kErrorUninitialized = 1,      // NVML_ERROR_UNINITIALIZED
  kErrorInvalidArgument = 2,    // NVML_ERROR_INVALID_ARGUMENT (also: link beyond the last)
  kErrorNotSupported = 3,       // NVML_ERROR_NOT_SUPPORTED
  kErrorNoPermission = 4,       // NVML_ERROR_NO_PERMISSION
  kErrorNotFound = 6,           // NVML_ERROR_NOT_FOUND
  kErrorInsufficientSize = 7,   // NVML_ERROR_INSUFFICIENT_SIZE
  kErrorDriverNotLoaded = 9,    // NVML_ERROR_DRIVER_NOT_LOADED
  kErrorFunctionNotFound = 13,  // NVML_ERROR_FUNCTION_NOT_FOUND (also: symbol missing)
  kErrorGpuIsLost = 15,         // NVML_ERROR_GPU_IS_LOST
  kErrorArgumentVersionMismatch = 25,  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH (a struct version too new)
  kErrorUnknown = 999,          // NVML_ERROR_UNKNOWN
};

enum EnableState : int { kFeatureDisabled = 0, kFeatureEnabled = 1 };  // nvmlEnableState_t

// nvmlNvLinkErrorCounter_t
enum NvLinkErrorCounter : int {
  kDlReplay = 0,    // NVML_NVLINK_ERROR_DL_REPLAY
  kDlRecovery = 1,  // NVML_NVLINK_ERROR_DL_RECOVERY
  kDlCrcFlit = 2,   // NVML_NVLINK_ERROR_DL_CRC_FLIT
  kDlCrcData = 3,   // NVML_NVLINK_ERROR_DL_CRC_DATA
  kDlEccData = 4,   // NVML_NVLINK_ERROR_DL_ECC_DATA
};

// nvmlIntNvLinkDeviceType_t: what sits at the far end of a link.
enum NvLinkDeviceType : int {
  kNvLinkDeviceGpu = 0x00,      // NVML_NVLINK_DEVICE_TYPE_GPU
  kNvLinkDeviceIbmNpu = 0x01,   // NVML_NVLINK_DEVICE_TYPE_IBMNPU
  kNvLinkDeviceSwitch = 0x02,   // NVML_NVLINK_DEVICE_TYPE_SWITCH
  kNvLinkDeviceUnknown = 0xFF,  // NVML_NVLINK_DEVICE_TYPE_UNKNOWN
};

// nvmlGpuTopologyLevel_t: closest common PCIe ancestor of two devices.
enum TopologyLevel : int {
  kTopologyInternal = 0,     // NVML_TOPOLOGY_INTERNAL (same board, e.g. K80)
  kTopologySingle = 10,      // NVML_TOPOLOGY_SINGLE     -> PIX
  kTopologyMultiple = 20,    // NVML_TOPOLOGY_MULTIPLE   -> PXB
  kTopologyHostbridge = 30,  // NVML_TOPOLOGY_HOSTBRIDGE -> PHB
  kTopologyNode = 40,        // NVML_TOPOLOGY_NODE       -> NODE
  kTopologySystem = 50,      // NVML_TOPOLOGY_SYSTEM     -> SYS
};

enum MemoryErrorType : int { kMemoryErrorCorrected = 0, kMemoryErrorUncorrected = 1 };
enum EccCounterType : int { kVolatileEcc = 0, kAggregateEcc = 1 };
enum ClockType : int { kClockGraphics = 0, kClockSm = 1, kClockMem = 2, kClockVideo = 3 };
enum TemperatureSensor : int { kTemperatureGpu = 0 };

// nvmlPerfPolicyType_t: the limiter whose "held below application clocks" time
// nvmlDeviceGetViolationStatus reports (a counter in ns, growing while the limiter acts).
enum PerfPolicyType : int {
  kPerfPolicyPower = 0,           // NVML_PERF_POLICY_POWER
  kPerfPolicyThermal = 1,         // NVML_PERF_POLICY_THERMAL
  kPerfPolicySyncBoost = 2,       // NVML_PERF_POLICY_SYNC_BOOST
  kPerfPolicyBoardLimit = 3,      // NVML_PERF_POLICY_BOARD_LIMIT
  kPerfPolicyLowUtilization = 4,  // NVML_PERF_POLICY_LOW_UTILIZATION
  kPerfPolicyReliability = 5,     // NVML_PERF_POLICY_RELIABILITY
};

// nvmlValueType_t: which member of Value a FieldValue carries.
enum ValueType : int {
  kValueDouble = 0,
  kValueUnsignedInt = 1,
  kValueUnsignedLong = 2,
  kValueUnsignedLongLong = 3,
  kValueSignedLongLong = 4,
  kValueSignedInt = 5,
  kValueUnsignedShort = 6,
};

// nvmlNvlinkVersion_t values returned by nvmlDeviceGetNvLinkVersion (an enum, not the version:
// NVLink 4.0 reads 6). Decoded by topology.cpp.
enum NvLinkVersion : unsigned {
  kNvLinkVersionInvalid = 0,
  kNvLinkVersion1_0 = 1,
  kNvLinkVersion2_0 = 2,
  kNvLinkVersion2_2 = 3,
  kNvLinkVersion3_0 = 4,
  kNvLinkVersion3_1 = 5,
  kNvLinkVersion4_0 = 6,
  kNvLinkVersion5_0 = 7,
  kNvLinkVersion6_0 = 8,
};

// NVML_NVLINK_MAX_LINKS is 18 in CUDA 12 headers and 36 in CUDA 13 ones: we iterate up to the
// larger; drivers answer NVML_ERROR_INVALID_ARGUMENT for links the device does not have.
inline constexpr unsigned kNvLinkMaxLinks = 36;

inline constexpr unsigned kPciBusIdBufferSize = 32;       // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
inline constexpr unsigned kPciBusIdBufferV2Size = 16;     // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
inline constexpr unsigned kDeviceUuidBufferSize = 96;     // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kDeviceNameBufferSize = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
inline constexpr unsigned kDeviceMigDisable = 0;          // NVML_DEVICE_MIG_DISABLE
inline constexpr unsigned kDeviceMigEnable = 1;           // NVML_DEVICE_MIG_ENABLE
// NVML_VALUE_NOT_AVAILABLE (-1) as stored in unsigned long long fields.
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;

// Field ids for nvmlDeviceGetFieldValues.
inline constexpr unsigned kFiNvLinkSpeedMbpsCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
inline constexpr unsigned kFiNvLinkGetSpeed = 164;  // NVML_FI_DEV_NVLINK_GET_SPEED (scopeId = link)

// Clock event ("throttle") reason bits, nvmlClocksEventReason* / nvmlClocksThrottleReason*.
inline constexpr unsigned long long kClocksEventGpuIdle = 0x1ULL;
inline constexpr unsigned long long kClocksEventApplicationsClocksSetting = 0x2ULL;
inline constexpr unsigned long long kClocksEventSwPowerCap = 0x4ULL;
inline constexpr unsigned long long kClocksEventHwSlowdown = 0x8ULL;
inline constexpr unsigned long long kClocksEventSyncBoost = 0x10ULL;
inline constexpr unsigned long long kClocksEventSwThermalSlowdown = 0x20ULL;
inline constexpr unsigned long long kClocksEventHwThermalSlowdown = 0x40ULL;
inline constexpr unsigned long long kClocksEventHwPowerBrakeSlowdown = 0x80ULL;
inline constexpr unsigned long long kClocksEventDisplayClockSetting = 0x100ULL;
inline constexpr unsigned long long kClocksEventBoardLimit = 0x200ULL;   // CUDA 13 headers on
inline constexpr unsigned long long kClocksEventReliability = 0x400ULL;  // CUDA 13 headers on

struct DeviceOpaque;           // struct nvmlDevice_st
using Device = DeviceOpaque*;  // nvmlDevice_t

// nvmlPciInfo_t
struct PciInfo {
  char busIdLegacy[kPciBusIdBufferV2Size];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // device id << 16 | vendor id
  unsigned int pciSubSystemId;
  char busId[kPciBusIdBufferSize];  // "domain:bus:device.function", NUL-terminated
};

// nvmlValue_t
union Value {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

// nvmlFieldValue_t
struct FieldValue {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  ValueType valueType;
  Return nvmlReturn;  // per-field status: check before reading value
  Value value;
};

// nvmlProcessInfo_t (= nvmlProcessInfo_v2_t), as filled by nvmlDeviceGetComputeRunningProcesses_v3.
struct ProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or kValueNotAvailable
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

// nvmlViolationTime_t
struct ViolationTime {
  unsigned long long referenceTime;  // CPU timestamp, microseconds
  unsigned long long violationTime;  // accumulated time below application clocks, nanoseconds
};

// GPU fabric (multi-node NVLink) registration, nvmlGpuFabricInfo_v3_t (= nvmlGpuFabricInfoV_t in
// CUDA 13's nvml.h) and nvmlGpuFabricInfo_v2_t, its older form (no healthSummary): drivers that
// predate v3 answer kErrorArgumentVersionMismatch to a v3 request.
inline constexpr unsigned kGpuFabricUuidLen = 16;          // NVML_GPU_FABRIC_UUID_LEN
inline constexpr unsigned char kFabricStateNotSupported = 0;  // NVML_GPU_FABRIC_STATE_NOT_SUPPORTED
inline constexpr unsigned char kFabricStateNotStarted = 1;    // NVML_GPU_FABRIC_STATE_NOT_STARTED
inline constexpr unsigned char kFabricStateInProgress = 2;    // NVML_GPU_FABRIC_STATE_IN_PROGRESS
inline constexpr unsigned char kFabricStateCompleted = 3;     // NVML_GPU_FABRIC_STATE_COMPLETED

struct GpuFabricInfoV2 {
  unsigned int version;  // sizeof | 2 << 24 (NVML_STRUCT_VERSION(GpuFabricInfo, 2))
  unsigned char clusterUuid[kGpuFabricUuidLen];
  Return status;  // meaningful once state is completed
  unsigned int cliqueId;
  unsigned char state;  // nvmlGpuFabricState_t
  unsigned int healthMask;
};

struct GpuFabricInfoV3 {
  unsigned int version;  // sizeof | 3 << 24 (nvmlGpuFabricInfo_v3)
  unsigned char clusterUuid[kGpuFabricUuidLen];
  Return status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;  // NVML_GPU_FABRIC_HEALTH_SUMMARY_*
};

template <typename T>
constexpr unsigned int struct_version(unsigned int v) {
  return static_cast<unsigned int>(sizeof(T)) | (v << 24U);  // NVML_STRUCT_VERSION
}

// Function signatures, one per symbol looked up with dlsym.
using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using SystemGetDriverVersionFn = Return (*)(char*, unsigned int);
using DeviceGetCountFn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceGetHandleByStringFn = Return (*)(const char*, Device*);
using DeviceGetStringFn = Return (*)(Device, char*, unsigned int);
using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);
using DeviceGetTopologyCommonAncestorFn = Return (*)(Device, Device, TopologyLevel*);
using DeviceGetUintFn = Return (*)(Device, unsigned int*);
using DeviceGetUllFn = Return (*)(Device, unsigned long long*);
using DeviceGetNvLinkStateFn = Return (*)(Device, unsigned int, EnableState*);
using DeviceGetNvLinkVersionFn = Return (*)(Device, unsigned int, unsigned int*);
using DeviceGetNvLinkRemotePciInfoFn = Return (*)(Device, unsigned int, PciInfo*);
using DeviceGetNvLinkRemoteDeviceTypeFn = Return (*)(Device, unsigned int, NvLinkDeviceType*);
using DeviceGetNvLinkErrorCounterFn = Return (*)(Device, unsigned int, NvLinkErrorCounter,
                                                 unsigned long long*);
using DeviceGetFieldValuesFn = Return (*)(Device, int, FieldValue*);
using DeviceGetComputeRunningProcessesFn = Return (*)(Device, unsigned int*, ProcessInfo*);
using DeviceGetEccModeFn = Return (*)(Device, EnableState*, EnableState*);
using DeviceGetTotalEccErrorsFn = Return (*)(Device, MemoryErrorType, EccCounterType,
                                             unsigned long long*);
using DeviceGetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);
using DeviceGetClockFn = Return (*)(Device, ClockType, unsigned int*);
using DeviceGetTemperatureFn = Return (*)(Device, TemperatureSensor, unsigned int*);
using DeviceGetEnableStateFn = Return (*)(Device, EnableState*);
using DeviceGetViolationStatusFn = Return (*)(Device, PerfPolicyType, ViolationTime*);
// nvmlDeviceGetGpuFabricInfoV: takes a v2 or v3 struct, told apart by its version field.
using DeviceGetGpuFabricInfoVFn = Return (*)(Device, void*);

}  // namespace p2pbench::nvml
