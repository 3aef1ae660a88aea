// What NVML says about a GPU's place in a multi-node NVLink fabric (nvmlDeviceGetGpuFabricInfoV):
// GPUs of several hosts that registered with the fabric manager under one cluster UUID and one
// clique id share an NVLink domain (GB200 NVL72), as NVIDIA's nvloom and NCCL group them. Plain
// data: read by topology/ on each rank, exchanged as JSON, grouped by plan/nvlink_domains.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace p2pbench {

struct GpuFabric {
  // Why there is no fabric information, "N/A: NVML_ERROR_NOT_SUPPORTED (...)"; empty when read.
  std::string unavailable;
  // Registration state: "not_supported", "not_started", "in_progress", "completed" (NVML_GPU_
  // FABRIC_STATE_*), or "state <n>" for a value this build does not know.
  std::string state;
  // The registration's result (meaningful once completed): "NVML_SUCCESS" or the error's name.
  std::string status;
  std::string cluster_uuid;  // 32 hex digits, as NVML's 16 bytes
  uint32_t clique_id = 0;
  std::optional<uint32_t> health_mask;  // NVML_GPU_FABRIC_HEALTH_MASK_* bits (v2 on)

  bool read() const { return unavailable.empty(); }
};

// Why `f` does not place its GPU in a fabric domain, or "" where it does: no fabric information,
// a registration not completed or failed, or no cluster (an all-zero UUID). NCCL's and nvloom's
// test: a completed registration with NVML_SUCCESS.
inline std::string no_fabric_domain_reason(const GpuFabric& f) {
  if (!f.read()) return "no fabric information (" + f.unavailable + ")";
  if (f.state != "completed") return "fabric registration not complete (state " + f.state + ")";
  if (f.status != "NVML_SUCCESS") return "fabric registration failed (" + f.status + ")";
  if (f.cluster_uuid.find_first_not_of('0') == std::string::npos)
    return "fabric registration completed without a cluster (cluster UUID all zeros)";
  return "";
}

// The name of the domain of a GPU whose registration placed it in one.
inline std::string fabric_domain_name(const GpuFabric& f) {
  return "clique " + std::to_string(f.clique_id) + " of cluster " + f.cluster_uuid;
}

inline void to_json(nlohmann::json& j, const GpuFabric& f) {
  if (!f.read()) {
    j = {{"unavailable", f.unavailable}};
    return;
  }
  j = {{"state", f.state}, {"status", f.status}, {"cluster_uuid", f.cluster_uuid}, {"clique_id", f.clique_id},
       {"health_mask", f.health_mask ? nlohmann::json(*f.health_mask) : nlohmann::json()}};
}

inline void from_json(const nlohmann::json& j, GpuFabric& f) {
  f = GpuFabric();
  f.unavailable = j.value("unavailable", std::string());
  if (!f.read()) return;
  f.state = j.value("state", std::string());
  f.status = j.value("status", std::string());
  f.cluster_uuid = j.value("cluster_uuid", std::string());
  f.clique_id = j.value("clique_id", 0u);
  if (j.contains("health_mask") && j["health_mask"].is_number()) f.health_mask = j["health_mask"].get<uint32_t>();
}

}  // namespace p2pbench
