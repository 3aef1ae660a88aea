// Result rows and metas of schema v2 (docs/groups.md), built by hand for the matrix and console
// tests: four ranks on two GPUs (ranks 0 and 1 on GPU-A, 2 and 3 on GPU-B) unless said otherwise.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "results/result_writer.hpp"

namespace p2pbench::testing {

constexpr uint64_t kGiB = uint64_t(1) << 30;

// The GPU of a rank in the four-rank layout: two ranks per GPU.
inline std::string gpu_of_rank(int rank) { return rank < 2 ? "GPU-A" : "GPU-B"; }

inline nlohmann::json stats_around(double median) {
  return {{"min", median - 2.0}, {"median", median}, {"mean", median}, {"max", median + 1.0}, {"stdev", 0.5}};
}

// One flow; no figure (nullopt) for skipped and failed rows.
inline nlohmann::json flow(int src, int dst, std::optional<double> gbps, std::optional<double> peak = 450.0) {
  const bool same_device = gpu_of_rank(src) == gpu_of_rank(dst);
  return {{"src_rank", src},
          {"dst_rank", dst},
          {"src_gpu", gpu_of_rank(src)},
          {"dst_gpu", gpu_of_rank(dst)},
          {"same_device", same_device},
          {"same_node", true},
          {"bytes", kGiB},
          {"bandwidth_gbps", gbps ? stats_around(*gbps) : nlohmann::json()},
          {"time_us", gbps ? stats_around(1e6 * double(kGiB) / (*gbps * 1e9)) : nlohmann::json()},
          {"samples_gbps", gbps ? nlohmann::json::array({*gbps}) : nlohmann::json::array()},
          {"peak_gbps", peak && !same_device ? nlohmann::json(*peak) : nlohmann::json()},
          {"pct_of_peak", gbps && peak && !same_device ? nlohmann::json(100.0 * *gbps / *peak) : nlohmann::json()}};
}

struct RowSpec {
  std::string method = "ce";
  std::string direction = "push";
  std::string mode = "uni";
  uint64_t bytes = kGiB;
  std::string pattern = "matrix";
  std::optional<std::string> schedule = std::string("sequential");
  std::optional<int> round;
  std::optional<int> blocks;  // ldst/tma shape
  std::string status = "ok";
  std::string error;
};

// A row whose aggregate is the sum of its flows' medians (the union of windows is not modelled).
inline nlohmann::json row(const RowSpec& s, const std::vector<nlohmann::json>& flows) {
  const bool one_flow = flows.size() == 1;
  double sum = 0;
  nlohmann::json peak = 0.0;
  for (const auto& f : flows) {
    if (f["bandwidth_gbps"].is_object()) sum += f["bandwidth_gbps"]["median"].get<double>();
    peak = f["peak_gbps"].is_number() && peak.is_number() ? nlohmann::json(peak.get<double>() + f["peak_gbps"].get<double>())
                                                          : nlohmann::json();
  }
  const bool ok = s.status == "ok";
  const nlohmann::json aggregate = ok ? stats_around(sum) : nlohmann::json();
  nlohmann::json r = {
      {"method", s.method}, {"direction", s.direction}, {"mode", s.mode}, {"bytes", s.bytes},
      {"src_rank", one_flow ? flows[0]["src_rank"] : nlohmann::json()},
      {"dst_rank", one_flow ? flows[0]["dst_rank"] : nlohmann::json()},
      {"blocks", s.blocks ? nlohmann::json(*s.blocks) : nlohmann::json()},
      {"threads", nullptr}, {"unroll", nullptr}, {"smem_bytes", nullptr}, {"stages", nullptr}, {"protocol", nullptr},
      {"atomic_type", nullptr}, {"atomic_pattern", nullptr}, {"ops_per_thread", nullptr}, {"hot_addresses", nullptr},
      {"sms_used", nullptr}, {"gbps_per_sm", nullptr}, {"iterations", 4}, {"samples", ok ? 1 : 0},
      {"bandwidth_gbps", aggregate}, {"time_us", ok ? stats_around(1000.0) : nlohmann::json()},
      {"samples_gbps", ok ? nlohmann::json::array({sum}) : nlohmann::json::array()},
      {"pct_of_peak", ok && peak.is_number() ? nlohmann::json(100.0 * sum / peak.get<double>()) : nlohmann::json()},
      {"verified", ok}, {"status", s.status},
      {"pattern", s.pattern}, {"schedule", s.schedule ? nlohmann::json(*s.schedule) : nlohmann::json()},
      {"round", s.round ? nlohmann::json(*s.round) : nlohmann::json()}, {"flows", flows},
      {"aggregate", {{"bandwidth_gbps", aggregate}, {"samples_gbps", ok ? nlohmann::json::array({sum}) : nlohmann::json::array()},
                     {"peak_gbps", peak}, {"pct_of_peak", ok && peak.is_number() ? nlohmann::json(100.0 * sum / peak.get<double>()) : nlohmann::json()}}},
      {"overlap", one_flow || !ok ? nlohmann::json() : nlohmann::json(0.98)}};
  if (!s.error.empty()) r["error"] = s.error;
  return r;
}

// meta.group and meta.pairs of `ranks` ranks; ranks on one GPU per gpu_of_rank.
inline nlohmann::json group_meta(int ranks = 4) {
  nlohmann::json pairs = nlohmann::json::array();
  for (int s = 0; s < ranks; ++s)
    for (int d = 0; d < ranks; ++d) {
      if (s == d) continue;
      const bool same = gpu_of_rank(s) == gpu_of_rank(d);
      pairs.push_back({{"src_rank", s}, {"dst_rank", d}, {"same_device", same}, {"same_node", true},
                       {"link_type", same ? "same_device" : "nvlink"}, {"topo_label", same ? "X" : "NV18"},
                       {"nvlink_links", same ? nlohmann::json() : nlohmann::json(18)},
                       {"peak_gbps_per_direction", same ? nlohmann::json() : nlohmann::json(450.0)}});
    }
  nlohmann::json rank_list = nlohmann::json::array();
  for (int r = 0; r < ranks; ++r) rank_list.push_back(r);
  return {{"group", {{"ranks", ranks}, {"nodes", {rank_list}}, {"node_override", nullptr}}}, {"pairs", pairs}};
}

// The same group as the run holds it: each rank's GPU, one node, 450 GB/s per direction between
// the two GPUs.
inline GroupFacts four_rank_facts(int ranks = 4) {
  GroupFacts facts;
  facts.peak_gbps.assign(size_t(ranks), std::vector<std::optional<double>>(size_t(ranks)));
  for (int r = 0; r < ranks; ++r) {
    facts.layout.gpu_of_rank.push_back(gpu_of_rank(r));
    facts.layout.node_of_rank.push_back(0);
  }
  for (int s = 0; s < ranks; ++s)
    for (int d = 0; d < ranks; ++d)
      if (gpu_of_rank(s) != gpu_of_rank(d)) facts.peak_gbps[size_t(s)][size_t(d)] = 450.0;
  return facts;
}

}  // namespace p2pbench::testing
