#include "judgement/link_health.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <utility>

#include "common/version.hpp"
#include "engines/nccl_engine.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {

using json = nlohmann::json;

LinkHealth::LinkHealth(const std::vector<json>& gpus, const GroupLayout& layout) {
  std::vector<GpuIdentity> by_rank;
  for (const json& g : gpus) by_rank.push_back({g["pci_bus_id"].get<std::string>(), g["uuid"].get<std::string>()});
  for (const GpuIdentity& id : by_rank)
    if (std::none_of(ids_.begin(), ids_.end(), [&](const GpuIdentity& x) { return x.uuid == id.uuid; })) ids_.push_back(id);
  auto opened = NvmlLibrary::open();
  if (auto* reason = std::get_if<std::string>(&opened)) {
    topology_ = {{"available", false}, {"reason", *reason}};
    before_ = health_unavailable(*reason);
    describe_pairs(by_rank, layout);
    return;
  }
  lib_.emplace(std::move(std::get<NvmlLibrary>(opened)));
  try {
    if (by_rank.size() < 2) {
      topology_ = {{"available", false}, {"reason", "one rank: no GPU pair"}};
    } else {
      topology_ = describe_pair(*lib_, by_rank.at(0), by_rank.at(1));
      topology_["available"] = true;
    }
  } catch (const std::exception& e) {
    topology_ = {{"available", false}, {"reason", std::string("describing the GPU pair: ") + e.what()}};
  }
  describe_pairs(by_rank, layout);
  before_ = health_snapshot(*lib_, ids_);
}

// Every ordered pair of ranks; NVML is asked once per pair of distinct GPUs.
void LinkHealth::describe_pairs(const std::vector<GpuIdentity>& by_rank, const GroupLayout& layout) {
  std::map<std::pair<std::string, std::string>, json> known;
  for (int a = 0; a < layout.size(); ++a)
    for (int b = 0; b < layout.size(); ++b) {
      if (a == b) continue;
      json entry = {{"src_rank", a}, {"dst_rank", b}, {"same_device", layout.same_device(a, b)},
                    {"same_node", layout.same_node(a, b)}, {"link_type", nullptr}, {"topo_label", nullptr},
                    {"nvlink_links", nullptr}, {"peak_gbps_per_direction", nullptr}};
      if (layout.same_device(a, b)) entry["link_type"] = "same_device";
      if (!layout.same_device(a, b) && lib_) {
        const auto key = std::make_pair(by_rank[size_t(a)].uuid, by_rank[size_t(b)].uuid);
        if (!known.count(key)) {
          try {
            known[key] = describe_pair(*lib_, by_rank[size_t(a)], by_rank[size_t(b)]);
          } catch (const std::exception& e) {
            known[key] = {{"reason", e.what()}};
          }
        }
        const json& d = known[key];
        entry["link_type"] = d.value("link_type", json());
        entry["topo_label"] = d.value("topo_label", json());
        if (d.contains("nvlink") && d["nvlink"].is_object()) {
          entry["nvlink_links"] = d["nvlink"].value("active_links", json());
          entry["via_nvswitch"] = d["nvlink"].value("via_nvswitch", json());
        }
        if (auto peak = peak_gbps(d)) entry["peak_gbps_per_direction"] = *peak;
      }
      pairs_.push_back(entry);
    }
}

std::vector<std::vector<std::optional<double>>> peaks_of_pairs(const json& pairs, int ranks) {
  std::vector<std::vector<std::optional<double>>> out;
  out.resize(static_cast<size_t>(ranks));
  for (auto& row : out) row.resize(size_t(ranks));
  if (!pairs.is_array()) return out;
  for (const json& p : pairs) {
    const int a = p["src_rank"], b = p["dst_rank"];
    if (a < ranks && b < ranks && p["peak_gbps_per_direction"].is_number())
      out[size_t(a)][size_t(b)] = p["peak_gbps_per_direction"].get<double>();
  }
  return out;
}

json LinkHealth::snapshot() const { return lib_ ? health_snapshot(*lib_, ids_) : before_; }

void LinkHealth::finish(json& meta) {
  meta["topology"] = topology_;
  meta["health_before"] = before_;
  if (!lib_) return;
  const json after = health_snapshot(*lib_, ids_);
  meta["health_after"] = after;
  meta["health_delta"] = health_delta(before_, after);
}

}  // namespace p2pbench
