#include "common/text_format.hpp"
#include "driver/run_header.hpp"

#include <string>

namespace p2pbench {

using nlohmann::json;

namespace {

// obj[key] as text: strings as they are, numbers as JSON, else `missing`.
std::string text(const json& obj, const char* key, const std::string& missing = "unknown") {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return missing;
  return obj[key].is_string() ? obj[key].get<std::string>() : obj[key].dump();
}

const json& field(const json& obj, const char* key) {
  static const json kNull;
  return obj.is_object() && obj.contains(key) ? obj[key] : kNull;
}

// CUDA's integer version (13000) as "13.0".
std::string cuda_version(const json& v) {
  if (!v.is_number_integer()) return "unknown";
  const int n = v.get<int>();
  return text_format("%d.%d", n / 1000, (n % 1000) / 10);
}

// The health_before entry of a GPU (matched by UUID), or null.
const json& health_of(const json& meta, const json& gpu) {
  static const json kNull;
  const json& gpus = field(field(meta, "health_before"), "gpus");
  if (!gpus.is_array()) return kNull;
  for (const json& h : gpus)
    if (!text(gpu, "uuid", "").empty() && text(h, "uuid", "") == text(gpu, "uuid", "")) return h;
  return kNull;
}

void print_identity(std::FILE* out, const json& meta) {
  const json& tool = field(meta, "tool");
  std::string hosts;
  for (const json& h : field(meta, "hosts").is_array() ? field(meta, "hosts") : json::array())
    hosts += (hosts.empty() ? "" : ", ") + h.get<std::string>();
  const bool dirty = field(field(meta, "provenance"), "dirty") == json(true);  // a tree that is not its commit
  std::fprintf(out, "p2pbench %s (git %s%s), %s, host %s\n", text(tool, "version").c_str(), text(tool, "git_sha").c_str(),
               dirty ? ", dirty" : "", text(meta, "timestamp_utc", "started now").c_str(),
               hosts.empty() ? "unknown" : hosts.c_str());
  const json& config = field(meta, "config");
  const json& verify = field(meta, "verify");
  std::fprintf(out, "run: label %s, verify %s, %s samples per case of >= %s ms, warm-up %s ms\n",
               text(meta, "label", text(config, "label")).c_str(),
               verify.is_boolean() ? (verify.get<bool>() ? "on (every byte checked)" : "OFF (copies not checked)")
                                   : "unknown",
               text(config, "samples").c_str(), text(config, "min_sample_time_ms").c_str(),
               text(config, "warmup_time_ms").c_str());
  std::string driver = text(field(meta, "health_before"), "driver_version", "");
  if (driver.empty() && field(meta, "gpus").is_array() && !field(meta, "gpus").empty())
    driver = text(field(meta, "gpus")[0], "driver_version");
  const json& nccl = field(meta, "nccl_version");
  std::fprintf(out, "software: NVIDIA driver %s, CUDA driver API %s, CUDA runtime %s, NCCL %s\n", driver.c_str(),
               cuda_version(field(meta, "cuda_driver_version")).c_str(),
               cuda_version(field(meta, "cuda_runtime_version")).c_str(),
               nccl.is_string() ? nccl.get<std::string>().c_str()
               : meta.contains("nccl_version") ? "not in this build"
                                               : "unknown");
}

void print_gpus(std::FILE* out, const json& meta) {
  const json& gpus = field(meta, "gpus");
  if (!gpus.is_array()) {
    std::fprintf(out, "GPUs: unknown\n");
    return;
  }
  for (const json& g : gpus) {
    const json& h = health_of(meta, g);
    const json& clocks = field(h, "clocks_mhz");
    const json& persistence = field(h, "persistence_mode");
    std::string line = text_format("GPU rank %s: index %s, %s, bus %s, %s", text(g, "rank").c_str(), text(g, "device_index").c_str(),
                              text(g, "name").c_str(), text(g, "pci_bus_id").c_str(), text(g, "uuid").c_str());
    line += ", persistence " + std::string(persistence.is_boolean() ? (persistence.get<bool>() ? "on" : "off") : "unknown");
    if (clocks.is_object())
      line += text_format(", clocks SM %s/%s MHz, memory %s/%s MHz (current/max)", text(clocks, "sm").c_str(),
                     text(clocks, "sm_max").c_str(), text(clocks, "mem").c_str(), text(clocks, "mem_max").c_str());
    else
      line += text_format(", clocks max SM %s MHz, memory %s MHz (NVML unavailable: no current clocks)",
                     text(g, "max_sm_clock_mhz").c_str(), text(g, "max_mem_clock_mhz").c_str());
    std::fprintf(out, "%s\n", line.c_str());
  }
}

std::string link_description(const json& topo) {
  const std::string type = text(topo, "link_type");
  const json& nv = field(topo, "nvlink");
  if (type == "nvlink" && nv.is_object())
    return text_format("NVLink %s, %s links x %s GB/s%s", text(nv, "version").c_str(), text(nv, "active_links").c_str(),
                  text(nv, "per_link_gbps").c_str(), field(nv, "via_nvswitch") == true ? ", via NVSwitch" : ", direct");
  const json& pcie = field(topo, "pcie");
  if (type == "pcie")
    return text_format("PCIe Gen%s x%s, path %s", text(pcie, "max_gen").c_str(), text(pcie, "max_width").c_str(),
                  text(pcie, "path").c_str());
  return type;
}

void print_link(std::FILE* out, const json& meta) {
  const json& topo = field(meta, "topology");
  const json& gpus = field(meta, "gpus");
  if (gpus.is_array() && gpus.size() == 1) {
    std::fprintf(out, "link: none (one rank: its own GPU only)\n");
    return;
  }
  if (!topo.is_object() || field(topo, "available") == false) {
    std::fprintf(out, "link rank 0 <-> rank 1: unknown (%s)\n", text(topo, "reason", "no topology recorded").c_str());
    return;
  }
  const json& peak = field(topo, "peak_gbps_per_direction");
  std::fprintf(out, "link rank 0 <-> rank 1: %s (%s), peak %s per direction (1 GB = 1e9 B; %s)\n",
               text(topo, "topo_label").c_str(), link_description(topo).c_str(),
               peak.is_number() ? text_format("%.1f GB/s", peak.get<double>()).c_str() : "unknown",
               text(topo, "peak_source").c_str());
}

void print_binding(std::FILE* out, const json& meta) {
  const json& ranks = field(meta, "ranks");
  if (!ranks.is_array()) {
    std::fprintf(out, "CPU binding: not known yet (the ranks report it at the end of the run)\n");
    return;
  }
  std::string line;
  for (const json& r : ranks) {
    const json& b = field(r, "cpu_binding");
    line += text_format("%srank %s (pid %s, %s): cpus %s, NUMA node %s, %s", line.empty() ? "" : "; ", text(r, "rank").c_str(),
                   text(r, "pid").c_str(), text(r, "host").c_str(), text(b, "cpus").c_str(), text(b, "numa_node").c_str(),
                   text(b, "policy").c_str());
  }
  std::fprintf(out, "CPU binding: %s\n", line.c_str());
}

// How the buffers were allocated and mapped (meta.peer_mapping; files before the allocators
// have none, and print nothing).
void print_peer_mapping(std::FILE* out, const json& meta) {
  const json& m = field(meta, "peer_mapping");
  if (!m.is_object()) return;
  std::string line = "peer memory: allocator " + text(m, "allocator") + ", buffers from " + text(m, "own_buffers");
  if (field(m, "granularity_bytes").is_number())
    line += text_format(" (granularity %s B)", text(m, "granularity_bytes").c_str());
  if (field(m, "map_ms").is_number())
    line += text_format(", peers mapped in %.1f ms (max over ranks)", field(m, "map_ms").get<double>());
  else
    line += ", no peer mapping: " + text(m, "reason", "no reason recorded");
  std::fprintf(out, "%s\n", line.c_str());
}

// The NVLink domains (meta.group.nvlink_domains; files before them have none, and print
// nothing): each domain's ranks, and why where a domain is the host rather than a fabric clique.
void print_nvlink_domains(std::FILE* out, const json& meta) {
  const json& d = field(field(meta, "group"), "nvlink_domains");
  if (!d.is_object() || !field(d, "domains").is_array()) return;
  std::string line;
  for (const json& domain : field(d, "domains")) {
    std::string ranks;
    for (const json& r : field(domain, "ranks")) ranks += (ranks.empty() ? "" : ",") + r.dump();
    line += text_format("%s%s: ranks %s", line.empty() ? "" : "; ", text(domain, "name").c_str(), ranks.c_str());
  }
  // One reason per distinct text: N ranks on GPUs without a fabric read as one line.
  std::string why;
  for (const json& r : field(d, "by_rank").is_array() ? field(d, "by_rank") : json::array()) {
    const std::string w = text(r, "why", "");
    if (!w.empty() && why.find(w) == std::string::npos) why += (why.empty() ? "" : "; ") + w;
  }
  std::fprintf(out, "NVLink domains: %s (%s)\n", line.c_str(), why.c_str());
}

}  // namespace

void print_run_header(std::FILE* out, const json& meta) {
  print_identity(out, meta);
  print_gpus(out, meta);
  print_link(out, meta);
  print_binding(out, meta);
  print_peer_mapping(out, meta);
  print_nvlink_domains(out, meta);
  std::fprintf(out, "\n");
}

}  // namespace p2pbench
