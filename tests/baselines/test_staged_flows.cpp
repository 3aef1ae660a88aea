// The staged baseline for a group, without a GPU: which flows an engine accepts, and the
// collective set-up of one staging area per node on ranks that are threads.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <mutex>

#include "common/errors.hpp"
#include "engines/baseline_resources.hpp"
#include "engines/staged_engine.hpp"
#include "thread_peer_group.hpp"

namespace p2pbench {
namespace {

// A node of `ranks`; prepare() refuses bad flows before it touches memory or the GPU.
StagingArea area_of(std::vector<int> ranks) {
  StagingArea area;
  area.layout.regions = uint32_t(ranks.size());
  area.ranks = std::move(ranks);
  return area;
}

std::string prepare_error(const StagingArea& area, int rank, const std::vector<Flow>& mine) {
  StagedEngine engine(area, 1);
  try {
    engine.prepare(0, rank, mine);
  } catch (const RuntimeFailure& e) {
    return e.what();
  }
  return "";
}

TEST(StagedFlows, RegionsAreTheNodesRanksInOrder) {
  const StagingArea area = area_of({2, 5, 7});
  EXPECT_EQ(area.region_of(2), 0);
  EXPECT_EQ(area.region_of(7), 2);
  EXPECT_EQ(area.region_of(3), -1);
}

TEST(StagedFlows, RefusesWhatOneNodesStagingAreaCannotCarry) {
  const StagingArea node = area_of({0, 1, 2});
  EXPECT_NE(prepare_error(area_of({0, 1}), 5, {}).find("rank 5 is not on the node"), std::string::npos);
  EXPECT_NE(prepare_error(node, 0, {{0, 3}}).find("different nodes"), std::string::npos);
  EXPECT_NE(prepare_error(node, 0, {{3, 0}}).find("different nodes"), std::string::npos);
  EXPECT_NE(prepare_error(node, 0, {{0, 1}, {0, 2}}).find("sends at most one flow"), std::string::npos);
  EXPECT_NE(prepare_error(node, 0, {{1, 0}, {2, 0}}).find("receives at most one flow"), std::string::npos);
  EXPECT_NE(prepare_error(node, 1, {{1, 1}}).find("to itself"), std::string::npos);
  EXPECT_NE(prepare_error(node, 0, {{1, 2}}).find("neither sends nor receives"), std::string::npos);
}

TEST(StagedFlows, RefusesAnAreaWhoseRegionsDoNotMatchItsRanks) {
  StagingArea area = area_of({0, 1});
  area.layout.regions = 3;
  EXPECT_THROW(StagedEngine(area, 1), std::invalid_argument);
  EXPECT_THROW(StagedEngine(area_of({0, 1}), 0), std::invalid_argument);  // epoch 0 is "no case"
}

bool gpu_visible() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Four ranks, nodes {0} and {1, 2, 3}: each node's lowest rank creates its area, the others open
// it by name. Nodes of different sizes make areas of different sizes, so a rank that opened the
// other node's (smaller) area fails ("expected at least").
TEST(StagedSetUp, EveryRankOfEveryNodeGetsTheSameAnswer) {
  std::mutex m;
  std::vector<std::optional<std::string>> answers(4);
  testing::run_ranks({0, 1, 1, 1}, [&](const PeerGroup& peers) {
    const auto resources = make_baseline_resources(0, 0);
    std::optional<std::string> why = resources->begin(Method::kStaged, peers);
    resources->end(Method::kStaged, peers);
    std::lock_guard<std::mutex> lock(m);
    answers[size_t(peers.rank())] = why;
  });
  for (const auto& a : answers) EXPECT_EQ(a, answers[0]);
  if (gpu_visible()) {
    EXPECT_FALSE(answers[0].has_value()) << *answers[0];
  } else {
    // Created and opened on every node; only registering with a GPU fails here.
    ASSERT_TRUE(answers[0].has_value());
    EXPECT_NE(answers[0]->find("registering host memory for the staged baseline's staging area"), std::string::npos)
        << *answers[0];
  }
}

TEST(StagedSetUp, UnbegunBaselinesSayWhyTheirCasesCannotRun) {
  const auto resources = make_baseline_resources(0, 0);
  CaseSpec c;
  c.method = Method::kStaged;
  const auto engine = resources->make_engine(c);
  ASSERT_TRUE(engine);
  EXPECT_TRUE(engine->unsupported_reason(0).has_value());
  EXPECT_TRUE(resources->nccl_environment().empty());
  c.method = Method::kCe;
  EXPECT_FALSE(resources->make_engine(c));
}

}  // namespace
}  // namespace p2pbench
