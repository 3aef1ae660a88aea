#include "gbench/run_context.hpp"

#include <cstdio>
#include <variant>

#include "common/cuda_check.hpp"
#include "common/version.hpp"
#include "topology/nvml_library.hpp"
#include "topology/topology.hpp"


namespace p2pbench::gbench {

namespace {

using json = nlohmann::json;

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string gpu_text(const GpuInfo& g) {
  return std::to_string(g.device_index) + ": " + g.name + ", " + g.uuid + ", " + g.pci_bus_id + ", " +
         std::to_string(g.sm_count) + " SMs, compute capability " + std::to_string(g.cc_major) + "." +
         std::to_string(g.cc_minor);
}

std::string nvml_driver_version(const NvmlLibrary& lib) {
  char version[nvml::kDriverVersionBufferSize] = {};
  const nvml::Return rc = lib.call(lib.api().SystemGetDriverVersion, version, nvml::kDriverVersionBufferSize);
  version[sizeof version - 1] = '\0';
  return rc == nvml::kSuccess ? std::string(version) : "unknown (" + lib.describe(rc, "nvmlSystemGetDriverVersion") + ")";
}

// NVML's view of the pair: "NV18 (nvlink), peak 477 GB/s per direction (nvlink_speed_field)".
std::string link_text(const NvmlLibrary& lib, const GpuInfo& a, const GpuInfo& b) {
  try {
    const json pair = describe_pair(lib, {a.pci_bus_id, a.uuid}, {b.pci_bus_id, b.uuid});
    std::string text = pair.value("topo_label", std::string("?")) + " (" + pair.value("link_type", std::string("?")) + ")";
    if (auto peak = peak_gbps(pair))
      text += ", peak " + number(*peak) + " GB/s per direction (" + pair.value("peak_source", std::string("?")) + ")";
    else
      text += ", peak unknown";
    return text;
  } catch (const std::exception& e) {
    return std::string("unknown (describing the GPU pair: ") + e.what() + ")";
  }
}

// CUDA's view: peer access and the driver's relative performance rank of the pair.
std::string p2p_text(const TwoGpuSession& s) {
  if (s.same_device()) return "one GPU for both ends (--allow-same-device): a functional test, not a P2P figure";
  const int a = s.gpu(0).device, b = s.gpu(1).device;
  auto attr = [&](cudaDeviceP2PAttr what, int from, int to) {
    int v = 0;
    if (cudaDeviceGetP2PAttribute(&v, what, from, to) == cudaSuccess) return std::to_string(v);
    cudaGetLastError();
    return std::string("?");
  };
  return "peer access enabled both ways; performance rank " + attr(cudaDevP2PAttrPerformanceRank, a, b) +
         " (0 is best); native atomics " + attr(cudaDevP2PAttrNativeAtomicSupported, a, b) + "; CUDA array access " +
         attr(cudaDevP2PAttrCudaArrayAccessSupported, a, b);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> describe_run(const TwoGpuSession& s, const Config& config) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("p2pbench", version_line() + ", config '" + config.label + "'");
  out.emplace_back("p2pbench_provenance", build_provenance().dump());  // as meta.provenance of p2pbench's files
  out.emplace_back("src_gpu", gpu_text(s.gpu(0).info));
  out.emplace_back("dst_gpu", gpu_text(s.gpu(1).info));

  int driver_api = 0, runtime = 0;
  const bool have_driver = cudaDriverGetVersion(&driver_api) == cudaSuccess;
  const bool have_runtime = cudaRuntimeGetVersion(&runtime) == cudaSuccess;
  cudaGetLastError();
  std::string nvml_version, link;
  auto opened = NvmlLibrary::open();
  if (auto* lib = std::get_if<NvmlLibrary>(&opened)) {
    nvml_version = nvml_driver_version(*lib);
    link = link_text(*lib, s.gpu(0).info, s.gpu(1).info);
  } else {
    nvml_version = "unknown (" + std::get<std::string>(opened) + ")";
    link = "unknown (" + std::get<std::string>(opened) + ")";
  }
  out.emplace_back("driver_version", nvml_version + ", CUDA driver API " +
                                         (have_driver ? cuda_version_text(driver_api) : std::string("?")));
  out.emplace_back("cuda_runtime", have_runtime ? cuda_version_text(runtime) : std::string("?"));
  out.emplace_back("link", link);
  out.emplace_back("p2p", p2p_text(s));

  const RunnerOptions& o = s.options();
  out.emplace_back("sample", "one iteration = one transfer; gated samples of >= " + number(o.min_sample_time_ms) +
                                 " ms of transfers (counter iterations_per_sample); warm-up " +
                                 number(o.warmup_time_ms) + " ms per case; buffer pool " +
                                 (o.buffer_pool_bytes ? std::to_string(o.buffer_pool_bytes) + " bytes" : std::string("off")));
  out.emplace_back("time", "manual, per sample: CUDA events around its transfers (uni); the union of both GPUs' "
                           "windows from the gate's release (bidir). Time is per transfer");
  out.emplace_back("verify", o.verify ? "every sample, every byte (poisoned before, checked after, untimed)"
                                      : "off (--no-verify or \"verify\": false)");
  out.emplace_back("units", "GB/s and GB/s_per_SM are 1e9 bytes/s; the console's bytes_per_second is 1024-based");
  return out;
}

}  // namespace p2pbench::gbench
