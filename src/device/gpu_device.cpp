#include "device/gpu_device.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/cuda_raii.hpp"
#include "common/device_connections.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"
#include "kernels/gate_kernels.hpp"

namespace p2pbench {

namespace {

std::string format_uuid(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int attribute(cudaDeviceAttr attr, int device, const char* what) {
  int v = 0;
  cuda_check(cudaDeviceGetAttribute(&v, attr, device), std::string("reading ") + what + " of GPU " + std::to_string(device));
  return v;
}

}  // namespace

int select_device(const std::string& spec, int local_rank) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    throw InputError(std::string("no CUDA GPU is visible to this process (") +
                     (err != cudaSuccess ? cudaGetErrorString(err) : "0 devices") +
                     "): p2pbench needs one GPU per rank. `nvidia-smi` shows what the driver sees (and "
                     "CUDA_VISIBLE_DEVICES may hide GPUs). Without a GPU, `p2pbench --config FILE --dry-run` lists the "
                     "cases and their time, and scripts/p2pbench-report reads results made on a GPU node");
  if (spec.empty()) return local_rank % count;
  bool numeric = true;
  for (char c : spec) numeric = numeric && std::isdigit(static_cast<unsigned char>(c));
  if (numeric) {
    // Compared as text length first: an index of many digits is out of range, not an overflow.
    const int index = spec.size() <= 6 ? std::stoi(spec) : count;
    if (index >= count)
      throw InputError("--devices", spec,
                       "only " + std::to_string(count) + " GPU(s) are visible to this rank (indices 0.." +
                           std::to_string(count - 1) + "); `nvidia-smi -L` lists them");
    return index;
  }
  for (int d = 0; d < count; ++d) {
    const GpuInfo info = describe_device(d);
    if (lower(info.uuid) == lower(spec) || lower(info.uuid) == "gpu-" + lower(spec) ||
        lower(info.pci_bus_id) == lower(spec) || lower(info.pci_bus_id).find(lower(spec)) != std::string::npos)
      return d;
  }
  throw InputError("--devices", spec, "no visible GPU has this index, UUID or PCI bus id");
}

GpuInfo describe_device(int device) {
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, device), "reading the properties of GPU " + std::to_string(device));
  GpuInfo g;
  g.device_index = device;
  g.mps = mps_daemon_reachable();
  g.name = prop.name;
  g.uuid = format_uuid(prop.uuid);
  char bus[32] = {0};
  cuda_check(cudaDeviceGetPCIBusId(bus, sizeof bus, device), "reading the PCI bus id of GPU " + std::to_string(device));
  g.pci_bus_id = bus;
  g.sm_count = prop.multiProcessorCount;
  g.cc_major = prop.major;
  g.cc_minor = prop.minor;
  g.memory_bytes = prop.totalGlobalMem;
  g.l2_bytes = size_t(prop.l2CacheSize);
  g.max_sm_clock_mhz = attribute(cudaDevAttrClockRate, device, "the peak SM clock") / 1000.0;
  g.max_mem_clock_mhz = attribute(cudaDevAttrMemoryClockRate, device, "the peak memory clock") / 1000.0;
  return g;
}

double measure_sm_clock_mhz() {
  Stream stream = make_stream("the SM clock probe");
  MappedHostBuffer out(2 * sizeof(uint64_t), "the SM clock probe");
  auto* values = static_cast<uint64_t*>(out.host());
  kernels::enqueue_sm_clock_probe(static_cast<uint64_t*>(out.device()), 2'000'000, stream.get());
  wait_for_stream(stream.get(), kLocalWorkWaitS, "the SM clock probe");
  return values[1] ? double(values[0]) / double(values[1]) * 1000.0 : 0.0;
}

nlohmann::json GpuInfo::to_json(int rank) const {
  return {{"rank", rank},
          {"device_index", device_index},
          {"name", name},
          {"uuid", uuid},
          {"pci_bus_id", pci_bus_id},
          {"sm_count", sm_count},
          {"compute_capability", std::to_string(cc_major) + "." + std::to_string(cc_minor)},
          {"memory_bytes", memory_bytes},
          {"l2_bytes", l2_bytes},
          {"max_sm_clock_mhz", max_sm_clock_mhz},
          {"max_mem_clock_mhz", max_mem_clock_mhz},
          {"observed_sm_clock_mhz", observed_sm_clock_mhz > 0 ? nlohmann::json(observed_sm_clock_mhz) : nlohmann::json()},
          {"mps", mps}};
}

}  // namespace p2pbench
