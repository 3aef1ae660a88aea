#include "driver/run_meta.hpp"

#include <unistd.h>

#include <cuda_runtime_api.h>

#include <set>

#include "common/cuda_check.hpp"
#include "common/version.hpp"
#include "engines/nccl_engine.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {

using json = nlohmann::json;

json rank_description(int rank, const std::string& host, int device, const json& cpu_binding, const json& gpu,
                      const json& clock_start) {
  return {{"rank", rank}, {"host", host}, {"pid", int(getpid())}, {"device_index", device},
          {"cpu_binding", cpu_binding}, {"gpu", gpu}, {"clock_start", clock_start}};
}

json start_meta(const RunFacts& f) {
  int driver = 0, runtime = 0;
  cuda_check(cudaDriverGetVersion(&driver), "asking the CUDA driver for its version (meta.cuda_driver_version)");
  cuda_check(cudaRuntimeGetVersion(&runtime), "asking the CUDA runtime for its version (meta.cuda_runtime_version)");
  std::set<std::string> hosts;
  json gpu_list = json::array(), rank_list = json::array();
  for (const json& r : f.ranks) {
    hosts.insert(r["host"].get<std::string>());
    gpu_list.push_back(r["gpu"]);
    rank_list.push_back({{"rank", r["rank"]}, {"host", r["host"]}, {"pid", r["pid"]}, {"device_index", r["device_index"]},
                         {"cpu_binding", r["cpu_binding"]}});
  }
  json group = json();
  if (f.layout) {
    group = {{"ranks", f.layout->size()}, {"nodes", f.layout->nodes()}, {"gpus", f.layout->gpus()},
             {"node_override", f.node_override > 0 ? json(f.node_override) : json()}};
    if (!f.nvlink_domains.is_null()) group["nvlink_domains"] = f.nvlink_domains;
  }
  json meta = {
      {"group", group},
      {"pairs", f.pairs.is_array() ? f.pairs : json::array()},
      {"tool", {{"name", "p2pbench"}, {"version", tool_version()}, {"git_sha", tool_git_sha()}}},
      {"provenance", build_provenance()},
      {"timestamp_utc", utc_timestamp()},
      {"command_line", f.command_line},
      {"label", f.config->label},
      {"config", f.config->to_json()},
      {"units", {{"bandwidth", "GB/s, 1 GB = 1e9 bytes"}, {"time", "microseconds"}, {"size", "bytes"}}},
      {"hosts", std::vector<std::string>(hosts.begin(), hosts.end())},
      {"ranks", rank_list},
      {"gpus", gpu_list},
      {"cuda_driver_version", driver},
      {"cuda_runtime_version", runtime},
      {"p2p", f.p2p},
      {"peer_access", f.peer_access},
      {"nccl_version", nccl_in_build() ? json(nccl_version()) : json()},
      {"same_device", f.same_device},
      {"verify", f.config->verify},
      {"sanitizer_mode", f.sanitizer_mode},
  };
  if (!f.peer_mapping.is_null()) meta["peer_mapping"] = f.peer_mapping;
  return meta;
}

void add_timer_calibration(json& meta, const std::vector<json>& ranks, const std::vector<json>& clock_end,
                           double sweep_seconds) {
  json at_start = json::array(), at_end = json::array(), notes = json::array();
  bool end_calibrated = clock_end.size() >= 2;  // an offset between two ranks' clocks
  for (size_t r = 0; r < ranks.size(); ++r) {
    at_start.push_back(ranks[r]["clock_start"]);
    const json end = r < clock_end.size() ? clock_end[r] : json();
    at_end.push_back(end);
    end_calibrated = end_calibrated && end.is_object() && end.value("rounds", 0) > 0;
    if (end.is_object() && end.contains("failed"))
      notes.push_back("rank " + std::to_string(r) + ": the end-of-run clock calibration failed (" +
                      end["failed"].get<std::string>() + "): the timers' drift over the sweep is not known");
  }
  const bool start_calibrated = ranks.size() >= 2 && ranks[0]["clock_start"].value("rounds", 0) > 0 &&
                                ranks[1]["clock_start"].value("rounds", 0) > 0;
  auto offset = [](const json& c) { return c["gpu_minus_host_ns"].get<double>(); };
  const double start = start_calibrated ? offset(at_start[1]) - offset(at_start[0]) : 0.0;
  const double end = end_calibrated ? offset(at_end[1]) - offset(at_end[0]) : 0.0;
  meta["timer_calibration"] = {
      {"method", "host CLOCK_REALTIME store polled by a GPU kernel; minimum of (gpu - host) over rounds"},
      {"use", "bidir windows start at the gate release on each GPU and are measured on that GPU's own timer; "
              "the offsets below are a check, not an input"},
      {"at_start", at_start},
      {"at_end", at_end},
      {"gpu1_minus_gpu0_ns_at_start", start_calibrated ? json(start) : json()},
      {"gpu1_minus_gpu0_ns_at_end", end_calibrated && start_calibrated ? json(end) : json()},
      {"sweep_seconds", sweep_seconds},
      {"relative_drift_ppm", end_calibrated && start_calibrated && sweep_seconds > 0
                                 ? json((end - start) / (sweep_seconds * 1e3))
                                 : json()},
  };
  if (!notes.empty()) meta["timer_calibration"]["notes"] = notes;
}

}  // namespace p2pbench
