// A stand-in libnvidia-ml.so for tests on machines without a GPU. Default build: values recorded
// on a 2 x H200 HGX node (NVSwitch, 18 NVLink 4 links per GPU at 26.562 GB/s, PCIe Gen5 x16).
// Built with FAKE_NVML_PCIE_ONLY: two PCIe-only L40S (Gen4 x16, no NVLink, no MIG), exporting
// only the pre-r535 ...ThrottleReasons name. Stateless: knobs are read from the environment at
// every call, so tests can change them between two snapshots.
//   FAKE_NVML_TICK=n          NVLink/ECC error counters and limiter times grow by n steps (see
//                             the counters below)
//   FAKE_NVML_SPEED=per_link|none   hide the common speed field / all NVLink speed fields
//   FAKE_NVML_NVLINK=direct|untyped  links go straight to the peer GPU / the remote device type
//                                    query is unsupported (remote bus id is an NVSwitch's)
#include <strings.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "topology/nvml_api.hpp"

namespace nv = p2pbench::nvml;

namespace {

struct FakeGpu {
  const char* name;
  const char* uuid;
  unsigned bus, device;  // domain 0, function 0
  unsigned pci_device_id;
  unsigned max_gen, max_width, cur_gen, cur_width;
  unsigned nvlinks;  // active links, 0..nvlinks-1
  unsigned sm, sm_max, mem, mem_max, temperature_c, power_mw;
  unsigned long long clock_reasons;
  unsigned process_pid;  // 0: no process
  unsigned long long process_bytes;
};

// Columns: name, UUID, bus, device, PCI id, PCIe max gen/width, current gen/width, NVLinks,
// SM and max SM MHz, memory and max memory MHz, deg C, mW, clock event bits, process pid/bytes.
#ifdef FAKE_NVML_PCIE_ONLY
constexpr FakeGpu kGpus[] = {
    {"NVIDIA L40S", "GPU-0a6f3c21-9d84-4b7e-8c15-2e9b7d40f6a3", 0x3B, 0, 0x26B910DE, 4, 16, 1, 16,
     0, 210, 2520, 405, 9001, 28, 35112, 0x4, 0, 0},
    {"NVIDIA L40S", "GPU-b83e1d57-06ca-4f29-a3d4-7c5e8f1b2a90", 0x5E, 0, 0x26B910DE, 4, 16, 4, 16,
     0, 210, 2520, 405, 9001, 30, 36020, 0x4, 0, 0},
};
constexpr nv::TopologyLevel kCommonAncestor = nv::kTopologyMultiple;  // PXB
#else
constexpr FakeGpu kGpus[] = {
    {"NVIDIA H200", "GPU-1d3c9a8e-5b2f-4c61-a7e0-93f4b2d8c615", 0x00, 0x06, 0x233510DE, 5, 16, 1,
     16, 18, 345, 1980, 3201, 3201, 31, 74512, 0x1, 4242, 536870912ULL},
    {"NVIDIA H200", "GPU-7e2a4f90-c31b-4d8e-b5a6-0f19e7c3d284", 0x00, 0x07, 0x233510DE, 5, 16, 1,
     16, 18, 345, 1980, 3201, 3201, 33, 76020, 0x1, 0, 0},
};
constexpr nv::TopologyLevel kCommonAncestor = nv::kTopologyNode;
#endif
constexpr unsigned kGpuCount = sizeof kGpus / sizeof kGpus[0];
constexpr unsigned kNvLinkSpeedMbps = 26562;  // nvidia-smi nvlink -s: 26.562 GB/s
constexpr unsigned kNvLinkVersionRaw = 6;     // NVML_NVLINK_VERSION_4_0
constexpr unsigned kNvSwitchDeviceId = 0x22A310DE;

// Handles are 1-based indices: no pointer to (const) data escapes.
const FakeGpu* gpu_of(nv::Device d) {
  const auto i = reinterpret_cast<std::uintptr_t>(d);
  return i >= 1 && i <= kGpuCount ? &kGpus[i - 1] : nullptr;
}
nv::Device handle_of(unsigned index) {
  return reinterpret_cast<nv::Device>(std::uintptr_t{index} + 1);
}
unsigned index_of(const FakeGpu* g) { return static_cast<unsigned>(g - kGpus); }

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}
unsigned long long tick() { return std::strtoull(env("FAKE_NVML_TICK").c_str(), nullptr, 10); }

nv::Return copy_string(const char* s, char* out, unsigned length) {
  if (out == nullptr) return nv::kErrorInvalidArgument;
  if (std::strlen(s) + 1 > length) return nv::kErrorInsufficientSize;
  std::strcpy(out, s);
  return nv::kSuccess;
}

void fill_pci(unsigned bus, unsigned device, unsigned id, nv::PciInfo* pci) {
  *pci = {};
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", 0u, bus, device);
  std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", 0u, bus, device);
  pci->bus = bus;
  pci->device = device;
  pci->pciDeviceId = id;
}

bool link_exists(const FakeGpu* g, unsigned link) { return g != nullptr && link < g->nvlinks; }

// NVSwitch reached by a link: 4 switches, the 18 links split 5/4/4/5 as on HGX H200.
unsigned switch_of(unsigned link) { return link < 5 ? 0 : link < 9 ? 1 : link < 13 ? 2 : 3; }

}  // namespace

extern "C" {

nv::Return nvmlInit_v2() { return nv::kSuccess; }
nv::Return nvmlShutdown() { return nv::kSuccess; }

const char* nvmlErrorString(nv::Return r) {
  switch (r) {
    case nv::kSuccess:
      return "Success";
    case nv::kErrorInvalidArgument:
      return "Invalid Argument";
    case nv::kErrorNotSupported:
      return "Not Supported";
    case nv::kErrorNotFound:
      return "Not Found";
    case nv::kErrorInsufficientSize:
      return "Insufficient Size";
    default:
      return "Unknown Error";
  }
}

nv::Return nvmlSystemGetDriverVersion(char* version, unsigned length) {
  return copy_string("550.127.08", version, length);
}

nv::Return nvmlDeviceGetCount_v2(unsigned* count) {
  *count = kGpuCount;
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetHandleByIndex_v2(unsigned index, nv::Device* device) {
  if (index >= kGpuCount) return nv::kErrorInvalidArgument;
  *device = handle_of(index);
  return nv::kSuccess;
}

// Accepts the same forms as NVML: domain:bus:device.function, domain:bus:device,
// bus:device.function.
nv::Return nvmlDeviceGetHandleByPciBusId_v2(const char* id, nv::Device* device) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) < 3 &&
      std::sscanf(id, "%x:%x.%x", &bus, &dev, &fn) != 3) {
    return nv::kErrorInvalidArgument;
  }
  for (unsigned i = 0; i < kGpuCount; ++i) {
    if (domain == 0 && kGpus[i].bus == bus && kGpus[i].device == dev) {
      *device = handle_of(i);
      return nv::kSuccess;
    }
  }
  return nv::kErrorNotFound;
}

nv::Return nvmlDeviceGetHandleByUUID(const char* uuid, nv::Device* device) {
  for (unsigned i = 0; i < kGpuCount; ++i) {
    if (strcasecmp(uuid, kGpus[i].uuid) == 0) {
      *device = handle_of(i);
      return nv::kSuccess;
    }
  }
  return nv::kErrorNotFound;
}

nv::Return nvmlDeviceGetName(nv::Device d, char* name, unsigned length) {
  const FakeGpu* g = gpu_of(d);
  return g ? copy_string(g->name, name, length) : nv::kErrorInvalidArgument;
}

nv::Return nvmlDeviceGetUUID(nv::Device d, char* uuid, unsigned length) {
  const FakeGpu* g = gpu_of(d);
  return g ? copy_string(g->uuid, uuid, length) : nv::kErrorInvalidArgument;
}

nv::Return nvmlDeviceGetPciInfo_v3(nv::Device d, nv::PciInfo* pci) {
  const FakeGpu* g = gpu_of(d);
  if (!g) return nv::kErrorInvalidArgument;
  fill_pci(g->bus, g->device, g->pci_device_id, pci);
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetTopologyCommonAncestor(nv::Device a, nv::Device b,
                                               nv::TopologyLevel* level) {
  if (!gpu_of(a) || !gpu_of(b)) return nv::kErrorInvalidArgument;
  *level = a == b ? nv::kTopologyInternal : kCommonAncestor;
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetMaxPcieLinkGeneration(nv::Device d, unsigned* v) {
  const FakeGpu* g = gpu_of(d);
  return g ? (*v = g->max_gen, nv::kSuccess) : nv::kErrorInvalidArgument;
}
nv::Return nvmlDeviceGetMaxPcieLinkWidth(nv::Device d, unsigned* v) {
  const FakeGpu* g = gpu_of(d);
  return g ? (*v = g->max_width, nv::kSuccess) : nv::kErrorInvalidArgument;
}
nv::Return nvmlDeviceGetCurrPcieLinkGeneration(nv::Device d, unsigned* v) {
  const FakeGpu* g = gpu_of(d);
  return g ? (*v = g->cur_gen, nv::kSuccess) : nv::kErrorInvalidArgument;
}
nv::Return nvmlDeviceGetCurrPcieLinkWidth(nv::Device d, unsigned* v) {
  const FakeGpu* g = gpu_of(d);
  return g ? (*v = g->cur_width, nv::kSuccess) : nv::kErrorInvalidArgument;
}

nv::Return nvmlDeviceGetNvLinkState(nv::Device d, unsigned link, nv::EnableState* active) {
  const FakeGpu* g = gpu_of(d);
  if (!g) return nv::kErrorInvalidArgument;
  if (g->nvlinks == 0) return nv::kErrorNotSupported;
  if (link >= g->nvlinks) return nv::kErrorInvalidArgument;  // as drivers do past the last link
  *active = nv::kFeatureEnabled;
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetNvLinkVersion(nv::Device d, unsigned link, unsigned* version) {
  if (!link_exists(gpu_of(d), link))
    return gpu_of(d) ? nv::kErrorNotSupported : nv::kErrorInvalidArgument;
  *version = kNvLinkVersionRaw;
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetNvLinkRemoteDeviceType(nv::Device d, unsigned link,
                                               nv::NvLinkDeviceType* type) {
  if (!link_exists(gpu_of(d), link)) return nv::kErrorNotSupported;
  const std::string mode = env("FAKE_NVML_NVLINK");
  if (mode == "untyped") return nv::kErrorNotSupported;
  *type = mode == "direct" ? nv::kNvLinkDeviceGpu : nv::kNvLinkDeviceSwitch;
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetNvLinkRemotePciInfo_v2(nv::Device d, unsigned link, nv::PciInfo* pci) {
  const FakeGpu* g = gpu_of(d);
  if (!link_exists(g, link)) return nv::kErrorNotSupported;
  if (env("FAKE_NVML_NVLINK") == "direct") {
    const FakeGpu& peer = kGpus[(index_of(g) + 1) % kGpuCount];
    fill_pci(peer.bus, peer.device, peer.pci_device_id, pci);
  } else {
    fill_pci(0x00, 0x0A + switch_of(link), kNvSwitchDeviceId, pci);
  }
  return nv::kSuccess;
}

// Counters: GPU1 link 3 had 2 replays before the run and gains 5 replays and 1 data CRC error
// per tick. DL_ECC_DATA is unsupported, to exercise the null-with-reason path.
nv::Return nvmlDeviceGetNvLinkErrorCounter(nv::Device d, unsigned link, nv::NvLinkErrorCounter c,
                                           unsigned long long* value) {
  const FakeGpu* g = gpu_of(d);
  if (!link_exists(g, link)) return nv::kErrorNotSupported;
  if (c == nv::kDlEccData) return nv::kErrorNotSupported;
  const bool noisy = index_of(g) == 1 && link == 3;
  *value = !noisy ? 0 : c == nv::kDlReplay ? 2 + 5 * tick() : c == nv::kDlCrcData ? tick() : 0;
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetFieldValues(nv::Device d, int count, nv::FieldValue* values) {
  const FakeGpu* g = gpu_of(d);
  if (!g || count < 0 || values == nullptr) return nv::kErrorInvalidArgument;
  const std::string speed = env("FAKE_NVML_SPEED");
  for (int i = 0; i < count; ++i) {
    nv::FieldValue& f = values[i];
    const bool common = f.fieldId == nv::kFiNvLinkSpeedMbpsCommon && speed.empty();
    const bool per_link =
        f.fieldId == nv::kFiNvLinkGetSpeed && speed != "none" && link_exists(g, f.scopeId);
    f.nvmlReturn = g->nvlinks > 0 && (common || per_link) ? nv::kSuccess : nv::kErrorNotSupported;
    f.valueType = nv::kValueUnsignedInt;
    f.value.uiVal = kNvLinkSpeedMbps;
  }
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetComputeRunningProcesses_v3(nv::Device d, unsigned* count,
                                                   nv::ProcessInfo* infos) {
  const FakeGpu* g = gpu_of(d);
  if (!g || count == nullptr) return nv::kErrorInvalidArgument;
  const unsigned n = g->process_pid != 0 ? 1 : 0;
  if (*count < n) {
    *count = n;
    return nv::kErrorInsufficientSize;
  }
  *count = n;
  if (n == 1) infos[0] = {g->process_pid, g->process_bytes, 0xFFFFFFFFu, 0xFFFFFFFFu};
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetEccMode(nv::Device d, nv::EnableState* current, nv::EnableState* pending) {
  if (!gpu_of(d)) return nv::kErrorInvalidArgument;
  *current = *pending = nv::kFeatureEnabled;
  return nv::kSuccess;
}

// GPU0 gains 2 corrected (single-bit) errors per tick; GPU0 had 4 aggregate corrected before.
nv::Return nvmlDeviceGetTotalEccErrors(nv::Device d, nv::MemoryErrorType type,
                                       nv::EccCounterType counter, unsigned long long* value) {
  const FakeGpu* g = gpu_of(d);
  if (!g) return nv::kErrorInvalidArgument;
  const bool gpu0_corrected = index_of(g) == 0 && type == nv::kMemoryErrorCorrected;
  *value = !gpu0_corrected ? 0 : (counter == nv::kAggregateEcc ? 4 : 0) + 2 * tick();
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetMigMode(nv::Device d, unsigned* current, unsigned* pending) {
  const FakeGpu* g = gpu_of(d);
  if (!g) return nv::kErrorInvalidArgument;
  if (g->nvlinks == 0) return nv::kErrorNotSupported;  // L40S has no MIG
  *current = *pending = nv::kDeviceMigDisable;
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetClockInfo(nv::Device d, nv::ClockType type, unsigned* mhz) {
  const FakeGpu* g = gpu_of(d);
  if (!g) return nv::kErrorInvalidArgument;
  *mhz = type == nv::kClockMem ? g->mem : g->sm;
  return nv::kSuccess;
}

nv::Return nvmlDeviceGetMaxClockInfo(nv::Device d, nv::ClockType type, unsigned* mhz) {
  const FakeGpu* g = gpu_of(d);
  if (!g) return nv::kErrorInvalidArgument;
  *mhz = type == nv::kClockMem ? g->mem_max : g->sm_max;
  return nv::kSuccess;
}

#ifdef FAKE_NVML_PCIE_ONLY
nv::Return nvmlDeviceGetCurrentClocksThrottleReasons(nv::Device d, unsigned long long* reasons) {
#else
nv::Return nvmlDeviceGetCurrentClocksEventReasons(nv::Device d, unsigned long long* reasons) {
#endif
  const FakeGpu* g = gpu_of(d);
  return g ? (*reasons = g->clock_reasons, nv::kSuccess) : nv::kErrorInvalidArgument;
}

nv::Return nvmlDeviceGetTemperature(nv::Device d, nv::TemperatureSensor, unsigned* celsius) {
  const FakeGpu* g = gpu_of(d);
  return g ? (*celsius = g->temperature_c, nv::kSuccess) : nv::kErrorInvalidArgument;
}

nv::Return nvmlDeviceGetPowerUsage(nv::Device d, unsigned* milliwatts) {
  const FakeGpu* g = gpu_of(d);
  return g ? (*milliwatts = g->power_mw, nv::kSuccess) : nv::kErrorInvalidArgument;
}

// Persistence mode: on for the first GPU, off for the second.
nv::Return nvmlDeviceGetPersistenceMode(nv::Device d, nv::EnableState* mode) {
  const FakeGpu* g = gpu_of(d);
  if (!g) return nv::kErrorInvalidArgument;
  *mode = index_of(g) == 0 ? nv::kFeatureEnabled : nv::kFeatureDisabled;
  return nv::kSuccess;
}

// Limiter times (ns): GPU1 was power-capped for 7 ms before the run and 3 ms more per tick; both
// GPUs gain 1 s of low-utilization time per tick (idle is not throttling). The reliability
// limiter is unsupported, to exercise the null-with-reason path.
nv::Return nvmlDeviceGetViolationStatus(nv::Device d, nv::PerfPolicyType policy,
                                        nv::ViolationTime* t) {
  const FakeGpu* g = gpu_of(d);
  if (!g || t == nullptr) return nv::kErrorInvalidArgument;
  if (policy == nv::kPerfPolicyReliability) return nv::kErrorNotSupported;
  t->referenceTime = 1700000000000000ULL + tick();
  t->violationTime = 0;
  if (policy == nv::kPerfPolicyPower && index_of(g) == 1) t->violationTime = 7000000 + 3000000 * tick();
  if (policy == nv::kPerfPolicyLowUtilization) t->violationTime = 1000000000ULL * tick();
  return nv::kSuccess;
}

// Fabric registration, by FAKE_NVML_FABRIC: unset: NVML_ERROR_NOT_SUPPORTED (a node without a
// multi-node fabric, as the H200 HGX answers); "completed" / "in_progress": that state, cluster
// 00112233-..., clique 7 for GPU 0 and 8 for GPU 1; "v2" the same as completed, but a v3 request
// is refused as a too-new struct version (a driver before v3). The PCIe fake has no such
// function, as drivers before r550.
#ifndef FAKE_NVML_PCIE_ONLY
nv::Return nvmlDeviceGetGpuFabricInfoV(nv::Device d, void* out) {
  const FakeGpu* g = gpu_of(d);
  if (!g || out == nullptr) return nv::kErrorInvalidArgument;
  const std::string mode = env("FAKE_NVML_FABRIC");
  if (mode.empty()) return nv::kErrorNotSupported;
  const unsigned version = *static_cast<unsigned*>(out);
  const bool v3 = version == nv::struct_version<nv::GpuFabricInfoV3>(3);
  if (mode == "v2" && v3) return nv::kErrorArgumentVersionMismatch;
  if (!v3 && version != nv::struct_version<nv::GpuFabricInfoV2>(2)) return nv::kErrorArgumentVersionMismatch;
  nv::GpuFabricInfoV3 info{};  // v2 is v3's prefix
  info.version = version;
  for (unsigned i = 0; i < nv::kGpuFabricUuidLen; ++i) info.clusterUuid[i] = static_cast<unsigned char>(i * 0x11);
  info.state = mode == "in_progress" ? nv::kFabricStateInProgress : nv::kFabricStateCompleted;
  info.status = nv::kSuccess;
  info.cliqueId = 7 + index_of(g);
  info.healthMask = 0x2;  // degraded bandwidth: false
  std::memcpy(out, &info, v3 ? sizeof(nv::GpuFabricInfoV3) : sizeof(nv::GpuFabricInfoV2));
  return nv::kSuccess;
}
#endif

}  // extern "C"
