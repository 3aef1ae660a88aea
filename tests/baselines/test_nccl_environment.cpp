#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "engines/nccl_engine.hpp"
#include "engines/nccl_environment.hpp"

namespace p2pbench {
namespace {

// An environment of the test's own, instead of the process's.
struct FakeEnvironment {
  std::map<std::string, std::string> values;
  std::function<const char*(const char*)> lookup() const {
    return [this](const char* name) -> const char* {
      const auto it = values.find(name);
      return it == values.end() ? nullptr : it->second.c_str();
    };
  }
};

NcclEnvironment decide(int rank, std::vector<std::string> hosts, std::vector<int> nodes, const FakeEnvironment& env = {}) {
  return decide_nccl_environment(NcclPlacement{rank, std::move(hosts), std::move(nodes)}, env.lookup());
}

TEST(NcclEnvironment, OneHostGetsLoopbackBootstrapNoMulticastAndKeepsItsHostIdentity) {
  const NcclEnvironment env = decide(1, {"h", "h"}, {0, 0});
  EXPECT_EQ(env.set, (std::map<std::string, std::string>{{"NCCL_NVLS_ENABLE", "0"}, {"NCCL_SOCKET_IFNAME", "lo"}}));
  EXPECT_TRUE(env.from_user.empty());
}

TEST(NcclEnvironment, NodeOverrideGivesEachNodeOfAHostItsOwnHostId) {
  // Four ranks on one host, two per node (--ranks-per-node 2).
  const std::vector<std::string> hosts{"h", "h", "h", "h"};
  const std::vector<int> nodes{0, 0, 1, 1};
  std::vector<std::string> ids;
  for (int r = 0; r < 4; ++r) {
    const NcclEnvironment env = decide(r, hosts, nodes);
    ASSERT_EQ(env.set.count("NCCL_HOSTID"), 1u) << "rank " << r;
    EXPECT_EQ(env.set.at("NCCL_SOCKET_IFNAME"), "lo");
    ids.push_back(env.set.at("NCCL_HOSTID"));
  }
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_EQ(ids[2], ids[3]);
  EXPECT_NE(ids[0], ids[2]);
  EXPECT_EQ(ids[0], "h:p2pbench-node0");
}

TEST(NcclEnvironment, RealHostsPickTheirOwnInterfaceAndOnlySplitHostsGetHostIds) {
  // Host a holds nodes 0 and 1 (the override); host b is node 2 alone.
  const std::vector<std::string> hosts{"a", "a", "b"};
  const std::vector<int> nodes{0, 1, 2};
  const NcclEnvironment on_a = decide(0, hosts, nodes);
  EXPECT_EQ(on_a.set.count("NCCL_SOCKET_IFNAME"), 0u) << "lo cannot reach another host";
  EXPECT_EQ(on_a.set.at("NCCL_HOSTID"), "a:p2pbench-node0");
  const NcclEnvironment on_b = decide(2, hosts, nodes);
  EXPECT_EQ(on_b.set, (std::map<std::string, std::string>{{"NCCL_NVLS_ENABLE", "0"}}));
  // Two real hosts without the override: nothing but multicast.
  EXPECT_EQ(decide(0, {"a", "b"}, {0, 1}).set.size(), 1u);
}

TEST(NcclEnvironment, TheUsersValuesAreKeptAndRecorded) {
  FakeEnvironment user;
  user.values = {{"NCCL_HOSTID", "mine"}, {"NCCL_NVLS_ENABLE", "1"}};
  const NcclEnvironment env = decide(0, {"h", "h"}, {0, 1}, user);
  EXPECT_EQ(env.set, (std::map<std::string, std::string>{{"NCCL_SOCKET_IFNAME", "lo"}}));
  EXPECT_EQ(env.from_user, user.values);
}

TEST(NcclEnvironment, RefusesAPlacementThatDoesNotMatchTheRanks) {
  EXPECT_THROW(decide(0, {"h", "h"}, {0}), std::invalid_argument);
  EXPECT_THROW(decide(2, {"h", "h"}, {0, 0}), std::invalid_argument);
}

TEST(NcclEnvironment, RanksSharingAGpuWithinANodeAreRefusedBeforeNcclIsCalled) {
  const NcclPlacement one_node{0, {}, {0, 0, 0}};
  // Three ranks on two GPUs: the ranks of the shared GPU are named, with the GPU.
  const auto why = shared_gpu_reason(one_node, {"0000:06:00.0", "0000:07:00.0", "0000:06:00.0"});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("ranks 0 and 2 share GPU 0000:06:00.0"), std::string::npos) << *why;
  EXPECT_FALSE(shared_gpu_reason(one_node, {"0000:06:00.0", "0000:07:00.0", "0000:08:00.0"}));
  // Nodes of the override are different hosts to NCCL: they may share a GPU.
  EXPECT_FALSE(shared_gpu_reason(NcclPlacement{0, {}, {0, 1}}, {"0000:06:00.0", "0000:06:00.0"}));
  EXPECT_THROW(shared_gpu_reason(one_node, {"0000:06:00.0"}), std::invalid_argument);
}

TEST(NcclEnvironment, ApplySetsOnlyWhatIsUnset) {
  unsetenv("P2PBENCH_TEST_NCCL_A");
  setenv("P2PBENCH_TEST_NCCL_B", "user", 1);
  NcclEnvironment env;
  env.set = {{"P2PBENCH_TEST_NCCL_A", "1"}, {"P2PBENCH_TEST_NCCL_B", "2"}};
  apply_nccl_environment(env);
  EXPECT_STREQ(std::getenv("P2PBENCH_TEST_NCCL_A"), "1");
  EXPECT_STREQ(std::getenv("P2PBENCH_TEST_NCCL_B"), "user");
  EXPECT_FALSE(local_host_name().empty());
}

TEST(NcclEnvironment, VersionIsReportedExactlyWhenTheBuildHasNccl) {
  if (nccl_in_build()) {
    const std::string v = nccl_version();
    EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
  } else {
    EXPECT_EQ(nccl_version(), "");
    EXPECT_THROW(NcclCommunicator::unique_id(), std::exception);
  }
}

}  // namespace
}  // namespace p2pbench
