// The matrix in rounds: every ordered pair exactly once, no GPU twice in a round, byes for odd
// groups, ranks sharing GPUs, several nodes.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "plan/rounds.hpp"

namespace p2pbench {
namespace {

GroupLayout layout_of(const std::vector<std::string>& gpus, int ranks_per_node = 0) {
  return GroupLayout::from_identities(gpus, std::vector<std::string>(gpus.size(), "host"), ranks_per_node);
}

// Checks the schedule's two properties and returns its rounds.
std::vector<std::vector<Flow>> checked_rounds(const GroupLayout& layout, Mode mode) {
  const auto rounds = matrix_rounds(layout, mode);
  std::map<std::pair<int, int>, int> seen;
  for (size_t r = 0; r < rounds.size(); ++r) {
    EXPECT_FALSE(rounds[r].empty()) << "round " << r;
    std::map<std::string, int> uses;  // per GPU: how many pairs of the round touch it
    std::set<std::pair<int, int>> pairs;
    for (const Flow& f : rounds[r]) {
      EXPECT_NE(f.src_rank, f.dst_rank);
      ++seen[{f.src_rank, f.dst_rank}];
      pairs.insert({std::min(f.src_rank, f.dst_rank), std::max(f.src_rank, f.dst_rank)});
    }
    for (const auto& [a, b] : pairs) {
      ++uses[layout.gpu_of_rank[size_t(a)]];
      if (!layout.same_device(a, b)) ++uses[layout.gpu_of_rank[size_t(b)]];
    }
    for (const auto& [gpu, n] : uses) EXPECT_EQ(n, 1) << gpu << " twice in round " << r;
  }
  for (int a = 0; a < layout.size(); ++a)
    for (int b = 0; b < layout.size(); ++b)
      if (a != b) {
        EXPECT_EQ(seen[std::make_pair(a, b)], 1) << a << "->" << b;
      }
  EXPECT_EQ(seen.size(), size_t(layout.size()) * size_t(layout.size() - 1));
  return rounds;
}

TEST(Rounds, EveryOrderedPairOnceNoGpuTwiceTwoToNineRanks) {
  for (int n = 2; n <= 9; ++n) {
    SCOPED_TRACE(n);
    const GroupLayout layout = GroupLayout::distinct(n);
    const auto uni = checked_rounds(layout, Mode::kUni);
    const auto bidir = checked_rounds(layout, Mode::kBidir);
    const size_t pair_rounds = n % 2 == 0 ? size_t(n - 1) : size_t(n);  // odd: one bye per round
    EXPECT_EQ(bidir.size(), pair_rounds);
    EXPECT_EQ(uni.size(), 2 * pair_rounds);
    for (const auto& round : uni) EXPECT_EQ(round.size(), size_t(n / 2)) << "every round is as full as it can be";
    for (const auto& round : bidir) EXPECT_EQ(round.size(), size_t(2 * (n / 2)));
  }
}

TEST(Rounds, OddGroupsGiveEachRankOneBye) {
  for (int n : {3, 5, 7, 9}) {
    std::map<int, int> byes;
    for (const auto& round : pair_rounds(GroupLayout::distinct(n))) {
      std::set<int> playing;
      for (const auto& [a, b] : round) playing.insert({a, b});
      ASSERT_EQ(playing.size(), size_t(n - 1));
      for (int r = 0; r < n; ++r)
        if (!playing.count(r)) ++byes[r];
    }
    for (int r = 0; r < n; ++r) EXPECT_EQ(byes[r], 1) << "n=" << n << " rank " << r;
  }
}

TEST(Rounds, TwoRanksAreZeroToOneThenOneToZero) {
  const auto uni = matrix_rounds(GroupLayout::distinct(2), Mode::kUni);
  ASSERT_EQ(uni.size(), 2u);
  EXPECT_EQ(uni[0], (std::vector<Flow>{{0, 1}}));
  EXPECT_EQ(uni[1], (std::vector<Flow>{{1, 0}}));
  const auto bidir = matrix_rounds(GroupLayout::distinct(2), Mode::kBidir);
  ASSERT_EQ(bidir.size(), 1u);
  EXPECT_EQ(bidir[0], (std::vector<Flow>{{0, 1}, {1, 0}}));
}

TEST(Rounds, RanksSharingGpusKeepBothProperties) {
  // Four ranks on two GPUs, both ways of numbering them: each GPU is in 5 of the 6 pairs
  // (a same-GPU pair counts once), so 5 pair rounds is the least possible.
  for (const auto& gpus : {std::vector<std::string>{"A", "A", "B", "B"}, std::vector<std::string>{"A", "B", "A", "B"}}) {
    const GroupLayout layout = layout_of(gpus);
    EXPECT_EQ(checked_rounds(layout, Mode::kBidir).size(), 5u);
    EXPECT_EQ(checked_rounds(layout, Mode::kUni).size(), 10u);
  }
  checked_rounds(layout_of({"A", "A", "B", "B", "C", "C"}), Mode::kUni);
  checked_rounds(layout_of({"A", "A", "A", "B", "B"}), Mode::kBidir);
  checked_rounds(layout_of({"A", "A", "A"}), Mode::kUni);  // all on one GPU: one pair a round
  EXPECT_EQ(pair_rounds(layout_of({"A", "A", "A"})).size(), 3u);
}

TEST(Rounds, NodesRunSideBySideThenAcross) {
  const GroupLayout layout = layout_of({"g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7"}, 4);
  checked_rounds(layout, Mode::kUni);
  const auto rounds = pair_rounds(layout);
  ASSERT_EQ(rounds.size(), 3u + 4u);  // each node's 3 rounds at once, then 4 across (a 4 x 4 matching each)
  for (size_t r = 0; r < rounds.size(); ++r)
    for (const auto& [a, b] : rounds[r]) {
      EXPECT_EQ(layout.same_node(a, b), r < 3) << a << "," << b << " in round " << r;
      EXPECT_EQ(rounds[r].size(), 4u);
    }
}

}  // namespace
}  // namespace p2pbench
