#include "driver/link_health.hpp"

#include <cuda_runtime.h>

#include "common/version.hpp"
#include "engines/nccl_engine.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {

using json = nlohmann::json;

LinkHealth::LinkHealth(const std::vector<json>& gpus) {
  for (const json& g : gpus) ids_.push_back({g["pci_bus_id"].get<std::string>(), g["uuid"].get<std::string>()});
  auto opened = NvmlLibrary::open();
  if (auto* reason = std::get_if<std::string>(&opened)) {
    topology_ = {{"available", false}, {"reason", *reason}};
    before_ = health_unavailable(*reason);
    return;
  }
  lib_.emplace(std::move(std::get<NvmlLibrary>(opened)));
  try {
    topology_ = describe_pair(*lib_, ids_.at(0), ids_.at(1));
    topology_["available"] = true;
    peak_ = peak_gbps(topology_);
  } catch (const std::exception& e) {
    topology_ = {{"available", false}, {"reason", std::string("describing the GPU pair: ") + e.what()}};
  }
  before_ = health_snapshot(*lib_, ids_);
}

void LinkHealth::finish(json& meta) {
  meta["topology"] = topology_;
  meta["health_before"] = before_;
  if (!lib_) return;
  const json after = health_snapshot(*lib_, ids_);
  meta["health_after"] = after;
  meta["health_delta"] = health_delta(before_, after);
}

}  // namespace p2pbench
