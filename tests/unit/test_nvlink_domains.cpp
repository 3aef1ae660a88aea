// NVLink domains from each GPU's fabric registration (plan/nvlink_domains.hpp) and what they
// decide for a pair across hosts (plan/group_skip.hpp), with fabric information made up here:
// no GPU, NVML or MPI needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/group_skip.hpp"
#include "plan/nvlink_domains.hpp"

namespace p2pbench {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kCluster = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

GpuFabric registered(uint32_t clique, const std::string& cluster = kCluster) {
  GpuFabric f;
  f.state = "completed";
  f.status = "NVML_SUCCESS";
  f.cluster_uuid = cluster;
  f.clique_id = clique;
  f.health_mask = 0x2;
  return f;
}

GpuFabric not_available() {
  GpuFabric f;
  f.unavailable = "N/A: NVML_ERROR_NOT_SUPPORTED (nvmlDeviceGetGpuFabricInfoV: Not Supported)";
  return f;
}

// Two hosts, two ranks each (ranks 0, 1 on host a; 2, 3 on host b).
GroupLayout two_hosts() {
  return GroupLayout::from_identities({"GPU-0", "GPU-1", "GPU-2", "GPU-3"}, {"a", "a", "b", "b"});
}

CaseSpec one_flow(Method m, int src, int dst) {
  CaseSpec c;
  c.method = m;
  c.flows = {{src, dst}};
  return c;
}

TEST(NvlinkDomains, TwoHostsInOneCliqueShareADomain) {
  GroupLayout l = two_hosts();
  const auto decisions = assign_nvlink_domains(l, {registered(7), registered(7), registered(7), registered(7)});
  EXPECT_EQ(l.domain_of_rank, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_TRUE(l.same_domain(0, 3));
  EXPECT_FALSE(l.same_node(0, 3));
  EXPECT_EQ(l.domain_name(2), "clique 7 of cluster " + kCluster);
  EXPECT_EQ(decisions[3].decided_by, "fabric");
  EXPECT_TRUE(has(decisions[3].why, "fabric registration completed: clique 7")) << decisions[3].why;
  // Across the hosts, a method that maps the peer's memory needs fabric handles; nccl runs as before.
  const auto ce = group_skip_reason(one_flow(Method::kCe, 0, 3), l);
  ASSERT_TRUE(ce);
  EXPECT_TRUE(has(*ce, "ranks 0 and 3 share NVLink domain clique 7 of cluster " + kCluster +
                           " across hosts: run with --allocator fabric")) << *ce;
  EXPECT_FALSE(group_skip_reason(one_flow(Method::kNccl, 0, 3), l));
  EXPECT_FALSE(group_skip_reason(one_flow(Method::kLdst, 0, 1), l)) << "within a host: CUDA IPC as ever";
  // The staged baseline shares host memory: no domain helps across hosts.
  const auto staged = group_skip_reason(one_flow(Method::kStaged, 0, 3), l);
  ASSERT_TRUE(staged);
  EXPECT_TRUE(has(*staged, "are on different nodes")) << *staged;
  // With fabric handles (--allocator fabric) the pair runs.
  l.fabric_memory = true;
  EXPECT_FALSE(group_skip_reason(one_flow(Method::kCe, 3, 0), l));
  EXPECT_FALSE(group_skip_reason(one_flow(Method::kTma, 0, 2), l));
}

TEST(NvlinkDomains, TwoHostsInTwoCliquesAreTwoDomains) {
  GroupLayout l = two_hosts();
  assign_nvlink_domains(l, {registered(7), registered(7), registered(8), registered(8)});
  EXPECT_EQ(l.domain_of_rank, (std::vector<int>{0, 0, 1, 1}));
  l.fabric_memory = true;  // fabric handles do not cross domains either
  const auto ce = group_skip_reason(one_flow(Method::kCe, 1, 2), l);
  ASSERT_TRUE(ce);
  EXPECT_TRUE(has(*ce, "rank 1 and rank 2 are on different nodes")) << *ce;
  EXPECT_TRUE(has(*ce, "in different NVLink domains (clique 7 of cluster " + kCluster + ", clique 8 of cluster")) << *ce;
  EXPECT_TRUE(has(*ce, "nccl")) << *ce;
  EXPECT_FALSE(group_skip_reason(one_flow(Method::kNccl, 1, 2), l));
  // The same clique id in another cluster is another domain.
  GroupLayout other = two_hosts();
  assign_nvlink_domains(other, {registered(7), registered(7), registered(7, std::string(31, '1') + "2"),
                                registered(7, std::string(31, '1') + "2")});
  EXPECT_FALSE(other.same_domain(0, 2));
}

TEST(NvlinkDomains, FabricNotAvailableGroupsByHost) {
  GroupLayout l = two_hosts();
  const auto decisions = assign_nvlink_domains(l, std::vector<GpuFabric>(4, not_available()));
  EXPECT_EQ(l.domain_of_rank, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(decisions[0].decided_by, "host");
  EXPECT_TRUE(has(decisions[0].why, "no fabric information (N/A: NVML_ERROR_NOT_SUPPORTED")) << decisions[0].why;
  EXPECT_TRUE(has(decisions[0].why, "the domain is the rank's node")) << decisions[0].why;
  // Across hosts the reason stays what it was before domains, naming the two host domains.
  const auto ce = group_skip_reason(one_flow(Method::kCe, 0, 2), l);
  ASSERT_TRUE(ce);
  EXPECT_TRUE(has(*ce, "rank 0 and rank 2 are on different nodes (hosts")) << *ce;
  EXPECT_FALSE(has(*ce, "--allocator fabric")) << *ce;
}

TEST(NvlinkDomains, RegistrationNotCompleteGroupsByHost) {
  GroupLayout l = two_hosts();
  GpuFabric in_progress = registered(7);
  in_progress.state = "in_progress";
  in_progress.status = "";
  GpuFabric failed = registered(7);
  failed.status = "NVML_ERROR_UNKNOWN (Unknown Error)";
  GpuFabric no_cluster = registered(7, std::string(32, '0'));
  const auto decisions = assign_nvlink_domains(l, {in_progress, failed, no_cluster, registered(7)});
  // Ranks 0-2 fall back to their host; rank 3 alone is in the clique (a domain of one).
  EXPECT_TRUE(l.same_domain(0, 1));
  EXPECT_FALSE(l.same_domain(2, 3));
  EXPECT_TRUE(has(decisions[0].why, "fabric registration not complete (state in_progress)")) << decisions[0].why;
  EXPECT_TRUE(has(decisions[1].why, "fabric registration failed (NVML_ERROR_UNKNOWN")) << decisions[1].why;
  EXPECT_TRUE(has(decisions[2].why, "cluster UUID all zeros")) << decisions[2].why;
  EXPECT_EQ(decisions[3].decided_by, "fabric");
  EXPECT_FALSE(has(*group_skip_reason(one_flow(Method::kCe, 0, 3), l), "--allocator fabric"));
}

TEST(NvlinkDomains, TheMetaNamesEachRanksDomainAndHowItWasDecided) {
  GroupLayout l = two_hosts();
  const std::vector<GpuFabric> fabric{registered(7), registered(7), not_available(), not_available()};
  const auto decisions = assign_nvlink_domains(l, fabric);
  const nlohmann::json m = nvlink_domains_meta(l, decisions, fabric);
  EXPECT_EQ(m["domain_of_rank"], nlohmann::json({0, 0, 1, 1}));
  EXPECT_EQ(m["domains"][0]["ranks"], nlohmann::json({0, 1}));
  EXPECT_EQ(m["domains"][1]["name"], "node 1");
  EXPECT_EQ(m["by_rank"][0]["fabric"]["clique_id"], 7);
  EXPECT_EQ(m["by_rank"][2]["decided_by"], "host");
  EXPECT_TRUE(has(m["by_rank"][2]["fabric"]["unavailable"].get<std::string>(), "NVML_ERROR_NOT_SUPPORTED"));
  // Fabric information travels between ranks as JSON and comes back the same.
  const GpuFabric back = nlohmann::json(fabric[0]).get<GpuFabric>();
  EXPECT_EQ(back.cluster_uuid, kCluster);
  EXPECT_EQ(back.health_mask, 0x2u);
  EXPECT_EQ(nlohmann::json(fabric[2]).get<GpuFabric>().unavailable, fabric[2].unavailable);
}

TEST(NvlinkDomains, WithoutDomainsEachNodeIsOne) {
  const GroupLayout dry = GroupLayout::distinct(3);
  EXPECT_TRUE(dry.same_domain(0, 2));
  GroupLayout l = two_hosts();
  EXPECT_THROW(assign_nvlink_domains(l, {registered(7)}), std::invalid_argument);
}

}  // namespace
}  // namespace p2pbench
