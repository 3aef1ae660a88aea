#include "topology/throttle_health.hpp"

#include <utility>

#include "topology/topology.hpp"

namespace p2pbench {

using nlohmann::json;

Queried<bool> persistence_mode(const NvmlLibrary& lib, nvml::Device device) {
  nvml::EnableState mode = nvml::kFeatureDisabled;
  const nvml::Return rc = lib.call(lib.api().DeviceGetPersistenceMode, device, &mode);
  if (rc != nvml::kSuccess) return {std::nullopt, lib.describe(rc, "nvmlDeviceGetPersistenceMode")};
  return {mode == nvml::kFeatureEnabled, {}};
}

json violation_times_ns(const NvmlLibrary& lib, nvml::Device device) {
  static constexpr std::pair<nvml::PerfPolicyType, const char*> kPolicies[] = {
      {nvml::kPerfPolicyPower, "power"},
      {nvml::kPerfPolicyThermal, "thermal"},
      {nvml::kPerfPolicySyncBoost, "sync_boost"},
      {nvml::kPerfPolicyBoardLimit, "board_limit"},
      {nvml::kPerfPolicyLowUtilization, "low_utilization"},
      {nvml::kPerfPolicyReliability, "reliability"},
  };
  json out = json::object();
  for (const auto& [policy, name] : kPolicies) {
    nvml::ViolationTime t{};
    const nvml::Return rc = lib.call(lib.api().DeviceGetViolationStatus, device, policy, &t);
    const std::string what = std::string("nvmlDeviceGetViolationStatus(") + name + ")";
    put(out, name,
        rc == nvml::kSuccess ? Queried<unsigned long long>{t.violationTime, {}}
                             : Queried<unsigned long long>{std::nullopt, lib.describe(rc, what)});
  }
  return out;
}

}  // namespace p2pbench
