#include "device/numa_placement.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace p2pbench {

NumaChoice choose_numa_node(NumaPlacement want, const NumaTopology& t) {
  const auto known = [&](const std::optional<int>& n) {
    return n && std::find(t.nodes.begin(), t.nodes.end(), *n) != t.nodes.end();
  };
  std::optional<int> local;
  if (known(t.gpu_node))
    local = t.gpu_node;
  else if (known(t.cpu_node))
    local = t.cpu_node;
  else if (t.nodes.size() == 1)
    local = t.nodes.front();
  if (!local) return {std::nullopt, "cannot tell which NUMA node is nearest the GPU (its PCI device reports none and "
                                    "the rank's CPU is on no node with memory)"};
  if (want == NumaPlacement::kLocal) return {local, ""};
  for (int n : t.nodes)
    if (n != *local) return {n, ""};
  return {std::nullopt, "this node has one NUMA node (node " + std::to_string(*local) + ")"};
}

std::vector<int> parse_node_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    part.erase(std::remove_if(part.begin(), part.end(), [](unsigned char c) { return std::isspace(c); }), part.end());
    if (part.empty() || !std::isdigit(static_cast<unsigned char>(part[0]))) continue;
    const size_t dash = part.find('-');
    try {
      const int first = std::stoi(part.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
      for (int n = first; n <= last && n - first < 4096; ++n) out.push_back(n);
    } catch (const std::exception&) {
      continue;  // not a number: ignored, as documented
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

}  // namespace

NumaTopology read_numa_topology(const std::string& pci_bus_id) {
  NumaTopology t;
  const std::string base = "/sys/devices/system/node/";
  const auto with_memory = read_line(base + "has_memory");
  const auto with_cpu = read_line(base + "has_cpu");
  if (with_memory && with_cpu) {
    const std::vector<int> mem = parse_node_list(*with_memory), cpu = parse_node_list(*with_cpu);
    std::set_intersection(mem.begin(), mem.end(), cpu.begin(), cpu.end(), std::back_inserter(t.nodes));
  } else if (const auto online = read_line(base + "online")) {
    t.nodes = parse_node_list(*online);
  }
  if (t.nodes.empty()) t.nodes = {0};  // no NUMA in the kernel: all memory is one node
  std::string bus = pci_bus_id;
  std::transform(bus.begin(), bus.end(), bus.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (const auto gpu = read_line("/sys/bus/pci/devices/" + bus + "/numa_node")) {
    try {
      if (std::stoi(*gpu) >= 0) t.gpu_node = std::stoi(*gpu);
    } catch (const std::exception&) {
    }
  }
  unsigned cpu = 0, node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, nullptr) == 0) t.cpu_node = int(node);
  return t;
}

}  // namespace p2pbench
