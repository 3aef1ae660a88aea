#include "workloads/workload.hpp"

#include "workloads/gemm_workload.hpp"
#include "workloads/hbm_workload.hpp"

namespace p2pbench {

std::unique_ptr<Workload> make_workload(const std::string& name, const InterferenceSettings& settings, int device) {
  if (name == "gemm") return std::make_unique<GemmWorkload>(settings.gemm, device);
  if (name == "hbm") return std::make_unique<HbmWorkload>(settings.hbm_bytes, device);
  return nullptr;
}

}  // namespace p2pbench
