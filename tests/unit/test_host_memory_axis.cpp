// The host memory axis of the host-link methods: the "host" config section, its expansion in
// the sweep (host-link methods only, the defaults leaving plans as they were), the case names
// and rows, and the NUMA node choice on fake topologies. No GPU.
#include <gtest/gtest.h>

#include <set>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "config_error.hpp"
#include "device/numa_placement.hpp"
#include "plan/sweep.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

json host_link(json host = nullptr) {
  json doc = {{"methods", {"h2d", "d2h"}}, {"sizes", {4096, 8192}}};
  if (!host.is_null()) doc["host"] = host;
  return doc;
}

std::string error_of(const json& doc) { return testing::config_error_of(doc); }

TEST(HostConfig, DefaultsArePinnedAndLocal) {
  const Config c = parse_config(host_link());
  EXPECT_EQ(c.host.memory, std::vector<HostMemoryKind>{HostMemoryKind::kPinned});
  EXPECT_EQ(c.host.numa, std::vector<NumaPlacement>{NumaPlacement::kLocal});
  EXPECT_EQ(c.to_json()["host"], (json{{"memory", {"pinned"}}, {"numa", {"local"}}}));
}

TEST(HostConfig, ReadsEveryKindAndRoundTrips) {
  const Config c = parse_config(host_link({{"memory", {"pageable", "pinned", "registered", "huge_pages"}},
                                           {"numa", {"local", "remote"}}}));
  EXPECT_EQ(c.host.memory, (std::vector<HostMemoryKind>{HostMemoryKind::kPageable, HostMemoryKind::kPinned,
                                                        HostMemoryKind::kRegistered, HostMemoryKind::kHugePages}));
  EXPECT_EQ(c.host.numa, (std::vector<NumaPlacement>{NumaPlacement::kLocal, NumaPlacement::kRemote}));
  // The effective config's section reads back as the same axis (the results' meta records it).
  const Config again = parse_config(host_link(c.to_json()["host"]));
  EXPECT_EQ(again.host.memory, c.host.memory);
  EXPECT_EQ(again.host.numa, c.host.numa);
}

TEST(HostConfig, BadValuesNameTheKeyAndValue) {
  EXPECT_NE(error_of(host_link({{"memory", {"pinned", "shared"}}})).find("host.memory[1] = \"shared\""), std::string::npos);
  EXPECT_NE(error_of(host_link({{"numa", {"far"}}})).find("host.numa[0] = \"far\""), std::string::npos);
  EXPECT_NE(error_of(host_link({{"memory", json::array()}})).find("host.memory"), std::string::npos);
  EXPECT_NE(error_of(host_link({{"memory", "pinned"}})).find("host.memory"), std::string::npos);  // not a list
  EXPECT_NE(error_of(host_link({{"memory", {"pinned", "pinned"}}})).find("listed twice"), std::string::npos);
  EXPECT_NE(error_of(host_link({{"pages", {"thp"}}})).find("host.pages"), std::string::npos);  // unknown key
  EXPECT_NE(error_of(host_link(json::array({"pinned"}))).find("host"), std::string::npos);      // not an object
}

TEST(HostSweep, DefaultsAddNoCasesAndKeepNames) {
  const auto cases = expand_cases(parse_config(host_link()), GroupLayout::distinct(1));
  ASSERT_EQ(cases.size(), 2u * 2u);  // h2d and d2h, two sizes, one rank
  EXPECT_EQ(cases[0].name(), "h2d/push/uni/0->0/bytes:4096");
  EXPECT_EQ(cases[0].host_memory, HostMemoryKind::kPinned);
  EXPECT_EQ(cases[0].host_numa, NumaPlacement::kLocal);
}

TEST(HostSweep, ExpandsOnlyHostLinkMethodsKindsOutermost) {
  json doc = host_link({{"memory", {"pinned", "pageable"}}, {"numa", {"local", "remote"}}});
  doc["methods"] = {"h2d", "d2h", "ce"};
  const Config c = parse_config(doc);
  const auto cases = expand_cases(c, GroupLayout::distinct(2));
  EXPECT_EQ(uint64_t(cases.size()), count_cases(c, GroupLayout::distinct(2)));
  std::vector<std::string> h2d;
  for (const CaseSpec& k : cases) {
    if (k.method == Method::kCe) {
      EXPECT_FALSE(k.host_memory);
      EXPECT_FALSE(k.host_numa);
      EXPECT_EQ(k.name().find("host:"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(k.host_memory && k.host_numa);
    if (k.method == Method::kH2d) h2d.push_back(k.name());
  }
  // 2 kinds x 2 placements x 2 sizes x 2 ranks; the defaults' names are the names of before.
  ASSERT_EQ(h2d.size(), 16u);
  EXPECT_EQ(h2d[0], "h2d/push/uni/0->0/bytes:4096");
  EXPECT_EQ(h2d[1], "h2d/push/uni/1->1/bytes:4096");
  EXPECT_EQ(h2d[4], "h2d/push/uni/0->0/bytes:4096/numa:remote");
  EXPECT_EQ(h2d[8], "h2d/push/uni/0->0/bytes:4096/host:pageable");
  EXPECT_EQ(h2d[15], "h2d/push/uni/1->1/bytes:8192/host:pageable/numa:remote");
  EXPECT_EQ(std::set<std::string>(h2d.begin(), h2d.end()).size(), h2d.size());  // no two cases share a name
}

TEST(HostSweep, RowsCarryTheKindAndWhatTheHostGave) {
  CaseSpec c;
  c.method = Method::kD2h;
  c.flows = {{0, 0}};
  c.bytes = 4096;
  c.host_memory = HostMemoryKind::kHugePages;
  c.host_numa = NumaPlacement::kLocal;
  CaseOutcome o;
  o.host_numa_node = 1;
  o.host_pages = "thp";
  const json id = identity_fields(c, o);
  EXPECT_EQ(id["host_memory"], "huge_pages");
  EXPECT_EQ(id["host_numa"], "local");
  const json row = result_row(c, o, GroupFacts::pair(std::nullopt));
  EXPECT_EQ(row["numa_node"], 1);
  EXPECT_EQ(row["host_pages"], "thp");
  CaseSpec ce;  // other methods: null identity, no host facts
  const json other = result_row(ce, CaseOutcome{}, GroupFacts::pair(std::nullopt));
  EXPECT_TRUE(other["host_memory"].is_null());
  EXPECT_FALSE(other.contains("host_pages"));
}

TEST(NumaChoice, LocalIsTheGpusNodeElseTheCpusElseTheOnly) {
  EXPECT_EQ(choose_numa_node(NumaPlacement::kLocal, {{0, 1}, 1, 0}).node, 1);
  EXPECT_EQ(choose_numa_node(NumaPlacement::kLocal, {{0, 1}, std::nullopt, 1}).node, 1);
  EXPECT_EQ(choose_numa_node(NumaPlacement::kLocal, {{0}, std::nullopt, std::nullopt}).node, 0);
  // A GPU node without CPUs (not in the list) falls back to the rank's CPU's node.
  EXPECT_EQ(choose_numa_node(NumaPlacement::kLocal, {{0, 1}, 7, 0}).node, 0);
  const NumaChoice unknown = choose_numa_node(NumaPlacement::kLocal, {{0, 1}, std::nullopt, std::nullopt});
  EXPECT_FALSE(unknown.node);
  EXPECT_NE(unknown.skip.find("nearest the GPU"), std::string::npos);
}

TEST(NumaChoice, RemoteIsAnotherNodeOrASkip) {
  EXPECT_EQ(choose_numa_node(NumaPlacement::kRemote, {{0, 1}, 0, 0}).node, 1);
  EXPECT_EQ(choose_numa_node(NumaPlacement::kRemote, {{0, 1, 2, 3}, 2, 2}).node, 0);
  EXPECT_EQ(choose_numa_node(NumaPlacement::kRemote, {{0, 1, 2, 3}, 0, 0}).node, 1);
  const NumaChoice one = choose_numa_node(NumaPlacement::kRemote, {{0}, 0, 0});
  EXPECT_FALSE(one.node);
  EXPECT_EQ(one.skip, "this node has one NUMA node (node 0)");
  EXPECT_EQ(choose_numa_node(NumaPlacement::kRemote, {{3}, std::nullopt, std::nullopt}).skip,
            "this node has one NUMA node (node 3)");
}

TEST(NumaChoice, ParsesSysfsNodeLists) {
  EXPECT_EQ(parse_node_list("0"), std::vector<int>{0});
  EXPECT_EQ(parse_node_list("0-3\n"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_node_list("0,2-3,8"), (std::vector<int>{0, 2, 3, 8}));
  EXPECT_EQ(parse_node_list("3,1,1"), (std::vector<int>{1, 3}));
  EXPECT_TRUE(parse_node_list("").empty());
  EXPECT_EQ(parse_node_list("x,1"), std::vector<int>{1});
}

TEST(NumaChoice, ReadsThisHostsTopology) {
  // Whatever the host: at least one node, and the local choice always succeeds on the nodes read.
  const NumaTopology t = read_numa_topology("0000:ff:1f.7");  // no such GPU: no GPU node
  ASSERT_FALSE(t.nodes.empty());
  EXPECT_FALSE(t.gpu_node);
  const NumaChoice local = choose_numa_node(NumaPlacement::kLocal, t);
  if (t.nodes.size() == 1) {
    EXPECT_EQ(local.node, t.nodes.front());
  }
}

}  // namespace
}  // namespace p2pbench
