#include "results/host_link_fields.hpp"

#include <nlohmann/json.hpp>

#include "measure/case_outcome.hpp"
#include "results/json_fields.hpp"
#include "vocab/host_memory_kinds.hpp"

namespace p2pbench {

using json = nlohmann::json;

namespace {

json host_memory(const CaseSpec& c, const CaseOutcome&) { return c.host_memory ? json(to_string(*c.host_memory)) : json(); }
json host_numa(const CaseSpec& c, const CaseOutcome&) { return c.host_numa ? json(to_string(*c.host_numa)) : json(); }
// What the host gave the buffer: null where the case never made it, absent where the case has
// no host buffer of its kind (a case made without the sweep).
json numa_node(const CaseSpec& c, const CaseOutcome& o) {
  return c.host_memory ? optional_json(o.host_numa_node) : json(json::value_t::discarded);
}
json host_pages(const CaseSpec& c, const CaseOutcome& o) {
  return c.host_memory ? optional_json(o.host_pages) : json(json::value_t::discarded);
}

}  // namespace

std::vector<RowField> host_link_fields() {
  RowField memory{"host_memory", RowFieldType::kText, "",
                  "host-link methods: how the host buffer was allocated (pinned: cudaHostAlloc; registered: 4 KiB "
                  "pages + cudaHostRegister; huge_pages: 2 MiB pages + cudaHostRegister; pageable: never registered, "
                  "staged by the driver); null for other methods (docs/host-memory.md)",
                  host_memory_kind_names(), true, true, to_string(HostMemoryKind::kPinned), "{} host memory"};
  memory.value = host_memory;
  RowField numa{"host_numa", RowFieldType::kText, "",
                "host-link methods: the NUMA placement asked for, seen from the GPU (local: its PCI device's node, "
                "else the rank's CPU's node; remote: another node with CPUs and memory)",
                numa_placement_names(), true, true, to_string(NumaPlacement::kLocal), "{} NUMA node"};
  numa.value = host_numa;
  RowField node{"numa_node", RowFieldType::kCount, "",
                "host-link methods: the node the host buffer's pages were found on after the first touch (null: "
                "spread over nodes, unknown, or never allocated)",
                {}, true};
  node.value = numa_node;
  RowField pages{"host_pages", RowFieldType::kText, "",
                 "host-link methods: the page size the host buffer got (/proc/self/smaps: hugetlbfs 2 MiB pages, "
                 "transparent huge pages for at least half of it, or 4 KiB)",
                 {"hugetlb_2MiB", "thp", "4KiB"}, true};
  pages.value = host_pages;
  return {memory, numa, node, pages};
}

}  // namespace p2pbench
