#include <gtest/gtest.h>

#include <mutex>

#include "thread_peer_group.hpp"

namespace p2pbench {
namespace {

using testing::run_ranks;

TEST(PeerGroup, NodeRanksAreThisRanksNodeInRankOrder) {
  std::mutex m;
  std::vector<std::vector<int>> seen(5);
  run_ranks({0, 1, 0, 1, 2}, [&](const PeerGroup& peers) {
    const std::vector<int> node = peers.node_ranks();
    std::lock_guard<std::mutex> lock(m);
    seen[size_t(peers.rank())] = node;
  });
  EXPECT_EQ(seen[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(seen[1], (std::vector<int>{1, 3}));
  EXPECT_EQ(seen[2], (std::vector<int>{0, 2}));
  EXPECT_EQ(seen[3], (std::vector<int>{1, 3}));
  EXPECT_EQ(seen[4], (std::vector<int>{4}));
}

TEST(PeerGroup, BroadcastHandsTheRootsBytesToEveryRank) {
  std::mutex m;
  std::vector<std::string> got(3);
  run_ranks({0, 0, 0}, [&](const PeerGroup& peers) {
    std::string bytes = "from rank " + std::to_string(peers.rank());
    peers.broadcast(bytes, 2, "a test broadcast");
    peers.barrier("after the broadcast");
    EXPECT_TRUE(peers.same_node(0, 2));
    std::lock_guard<std::mutex> lock(m);
    got[size_t(peers.rank())] = bytes;
  });
  for (const std::string& g : got) EXPECT_EQ(g, "from rank 2");
}

}  // namespace
}  // namespace p2pbench
