// Which processes on the run's GPUs were the run's own, and which were contention.
//
// A process is the run's own when its pid is ANY rank's pid (meta.ranks[].pid), on any GPU: a
// rank may hold a context on its peer's GPU too. The snapshots (rank 0's NVML) list pids as the
// host's kernel sees them; ranks in a container with its own pid namespace know themselves by
// other numbers. So, decided and documented here:
// - if any listed pid is a rank's pid, the namespaces agree and every other pid is contention;
// - if none is, a GPU listing at most as many processes as ranks use it is taken to be those
//   ranks seen from another namespace: "unknown", an info item, not contention; more than that
//   is contention (the surplus at least);
// - a file without rank pids falls back to the snapshot's own is_self (rank 0 only).
// Only the processes present at a snapshot (before and after the sweep) are seen.
#include <map>
#include <set>

#include "common/text_format.hpp"
#include "judgement/verdict_detail.hpp"
#include "judgement/verdicts.hpp"

namespace p2pbench {

using nlohmann::json;

namespace verdict_detail {

const json* child(const json* obj, const char* key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  const auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}

GpuRef gpu_ref(const json& meta, const json& health_gpu) {
  GpuRef ref{health_gpu.value("uuid", ""), health_gpu.value("pci_bus_id", ""), "", std::nullopt};
  std::string index = "?";
  if (const json* gpus = child(&meta, "gpus"); gpus != nullptr && gpus->is_array()) {
    for (const json& g : *gpus) {
      if (ref.uuid.empty() || g.value("uuid", "") != ref.uuid) continue;
      if (g.contains("device_index")) index = g["device_index"].dump();
      if (g.contains("rank") && g["rank"].is_number_integer()) ref.rank = g["rank"].get<int>();
      break;
    }
  }
  ref.label = "GPU" + index + " (" + ref.bus_id + ")";
  return ref;
}

json item(const std::string& code, const std::string& severity, const GpuRef* gpu, const std::string& message,
          json evidence) {
  return {{"code", code},
          {"severity", severity},
          {"rank", gpu && gpu->rank ? json(*gpu->rank) : json()},
          {"gpu_uuid", gpu && !gpu->uuid.empty() ? json(gpu->uuid) : json()},
          {"message", message},
          {"evidence", std::move(evidence)}};
}

namespace {

// pid -> rank, from meta.ranks.
std::map<long long, int> rank_pids(const json& meta) {
  std::map<long long, int> pids;
  if (const json* ranks = child(&meta, "ranks"); ranks != nullptr && ranks->is_array())
    for (const json& r : *ranks)
      if (r.contains("pid") && r["pid"].is_number_integer()) pids[r["pid"].get<long long>()] = r.value("rank", -1);
  return pids;
}

struct Seen {
  json used_memory_bytes;  // largest seen, or null
  std::vector<std::string> when;
  bool recorded_self = false;
};

struct GpuProcesses {
  std::string bus_id;
  std::map<long long, Seen> procs;
};

// Per GPU UUID: every process listed in health_before / health_after.
std::map<std::string, GpuProcesses> processes_by_gpu(const json& meta) {
  std::map<std::string, GpuProcesses> out;
  for (const char* when : {"health_before", "health_after"}) {
    const json* gpus = child(child(&meta, when), "gpus");
    if (gpus == nullptr || !gpus->is_array()) continue;
    for (const json& g : *gpus) {
      const json* list = child(&g, "processes");
      if (list == nullptr || !list->is_array()) continue;
      GpuProcesses& gpu = out[g.value("uuid", "")];
      gpu.bus_id = g.value("pci_bus_id", "");
      auto& procs = gpu.procs;
      for (const json& p : *list) {
        Seen& s = procs[p.value("pid", -1LL)];
        s.when.push_back(std::string(when).substr(7));  // "before" / "after"
        s.recorded_self = s.recorded_self || p.value("is_self", false);
        const json* mem = child(&p, "used_memory_bytes");
        if (mem != nullptr && mem->is_number() && (s.used_memory_bytes.is_null() || *mem > s.used_memory_bytes))
          s.used_memory_bytes = *mem;
      }
    }
  }
  return out;
}

size_t ranks_on_gpu(const json& meta, const std::string& uuid) {
  size_t n = 0;
  if (const json* gpus = child(&meta, "gpus"); gpus != nullptr && gpus->is_array())
    for (const json& g : *gpus) n += g.value("uuid", "") == uuid ? 1 : 0;
  return n;
}

std::string describe(const std::map<long long, Seen>& others) {
  std::string out;
  for (const auto& [pid, s] : others) {
    out += text_format("%spid %lld", out.empty() ? "" : ", ", pid);
    if (s.used_memory_bytes.is_number()) out += text_format(" (%.0f MiB)", s.used_memory_bytes.get<double>() / 1048576.0);
    out += " at";
    for (const auto& w : s.when) out += " " + w;
  }
  return out;
}

}  // namespace

void contention_items(const json& meta, json& items) {
  const auto own = rank_pids(meta);
  const auto by_gpu = processes_by_gpu(meta);
  bool namespaces_agree = false;
  for (const auto& [uuid, gpu] : by_gpu)
    for (const auto& [pid, s] : gpu.procs) namespaces_agree = namespaces_agree || own.count(pid) > 0;
  for (const auto& [uuid, listed] : by_gpu) {
    std::map<long long, Seen> others;
    for (const auto& [pid, s] : listed.procs)
      if (own.empty() ? !s.recorded_self : own.count(pid) == 0) others.emplace(pid, s);
    if (others.empty()) continue;
    const GpuRef gpu = gpu_ref(meta, json{{"uuid", uuid}, {"pci_bus_id", listed.bus_id}});
    const size_t expected = ranks_on_gpu(meta, uuid);
    json evidence = {{"other_pids", json::array()}, {"rank_pids", json::array()}, {"ranks_on_gpu", expected}};
    for (const auto& [pid, s] : others) evidence["other_pids"].push_back(pid);
    for (const auto& [pid, r] : own) evidence["rank_pids"].push_back(pid);
    if (!own.empty() && !namespaces_agree && others.size() <= expected) {
      items.push_back(item("contention", "info", &gpu,
                           gpu.label + text_format(": %zu process(es) whose pid matches no rank (", others.size()) +
                               describe(others) +
                               "); taken to be the ranks seen from another pid namespace (container), not contention",
                           std::move(evidence)));
      continue;
    }
    const size_t surplus = !own.empty() && !namespaces_agree ? others.size() - expected : others.size();
    evidence["other_processes_at_least"] = surplus;
    items.push_back(item("contention", "warn", &gpu,
                         gpu.label + text_format(": %zu other process(es) on the GPU during the run: ", surplus) +
                             describe(others) + (own.empty() ? " (rank pids not recorded: judged by rank 0's pid)" : ""),
                         std::move(evidence)));
  }
}

}  // namespace verdict_detail

void mark_own_processes(json& meta) {
  std::map<long long, int> own;
  if (const json* ranks = verdict_detail::child(&meta, "ranks"); ranks != nullptr && ranks->is_array())
    for (const json& r : *ranks)
      if (r.contains("pid") && r["pid"].is_number_integer()) own[r["pid"].get<long long>()] = r.value("rank", -1);
  if (own.empty()) return;  // nothing better than the snapshot's own guess
  for (const char* when : {"health_before", "health_after"}) {
    if (!meta.contains(when) || !meta[when].contains("gpus") || !meta[when]["gpus"].is_array()) continue;
    for (json& g : meta[when]["gpus"]) {
      if (!g.contains("processes") || !g["processes"].is_array()) continue;
      for (json& p : g["processes"]) {
        const auto it = own.find(p.value("pid", -1LL));
        p["is_self"] = it != own.end();
        p["rank"] = it != own.end() ? json(it->second) : json();
      }
    }
  }
}

}  // namespace p2pbench
