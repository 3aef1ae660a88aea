#include "device/cpu_binding.hpp"

#include <sched.h>

#include <cctype>
#include <fstream>
#include <sstream>

namespace p2pbench {

namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

// "0-3,8-11" -> CPU set; false on a malformed list.
bool parse_cpu_list(const std::string& list, cpu_set_t* set) {
  CPU_ZERO(set);
  std::stringstream ss(list);
  std::string part;
  bool any = false;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    const size_t dash = part.find('-');
    try {
      const int lo = std::stoi(part.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
      for (int c = lo; c <= hi && c < CPU_SETSIZE; ++c) CPU_SET(c, set);
      any = true;
    } catch (...) {
      return false;
    }
  }
  return any;
}

std::string sysfs_dir(std::string bus_id) {
  for (char& c : bus_id) c = char(std::tolower(static_cast<unsigned char>(c)));
  // CUDA prints an 8-digit PCI domain on some systems; sysfs uses 4.
  if (bus_id.size() > 12 && bus_id.find(':') == 8) bus_id = bus_id.substr(4);
  return "/sys/bus/pci/devices/" + bus_id;
}

}  // namespace

std::string current_cpu_list() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "unknown";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int end = c;
    while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set)) ++end;
    out += (out.empty() ? "" : ",") + std::to_string(c) + (end > c ? "-" + std::to_string(end) : "");
    c = end;
  }
  return out;
}

nlohmann::json bind_near_gpu(const std::string& pci_bus_id, bool enabled) {
  nlohmann::json out = {{"inherited_cpus", current_cpu_list()}};
  const std::string dir = sysfs_dir(pci_bus_id);
  const std::string node = read_first_line(dir + "/numa_node");
  const std::string cpus = read_first_line(dir + "/local_cpulist");
  out["numa_node"] = node.empty() ? nlohmann::json() : nlohmann::json(std::stoi(node));
  if (!enabled) {
    out["policy"] = "none";
    out["reason"] = "disabled by --no-cpu-binding";
  } else if (cpus.empty()) {
    out["policy"] = "none";
    out["reason"] = "the GPU's CPU locality is unknown (" + dir + "/local_cpulist unreadable)";
  } else {
    cpu_set_t set;
    if (!parse_cpu_list(cpus, &set) || sched_setaffinity(0, sizeof set, &set) != 0) {
      out["policy"] = "none";
      out["reason"] = "could not bind to the GPU-local CPUs " + cpus;
    } else {
      out["policy"] = "gpu-local";
    }
  }
  out["cpus"] = current_cpu_list();
  return out;
}

}  // namespace p2pbench
