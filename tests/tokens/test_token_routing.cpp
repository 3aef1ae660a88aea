// The tokens method's router and layout: seeded and the same everywhere, top-k distinct experts,
// a token once per rank, skew that concentrates on hot experts, receive blocks that tile each
// rank's buffer, local copies counted apart from what crosses the link.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "methods/tokens/token_routing.hpp"

namespace {

using namespace p2pbench::tokens;

RouterSpec spec(Skew skew = Skew::kUniform) {
  RouterSpec s;
  s.tokens_per_rank = 4096;
  s.experts = 256;
  s.top_k = 8;
  s.skew = skew;
  s.seed = 42;
  return s;
}

TEST(TokenRouting, DeepSeekV3Defaults) {
  EXPECT_EQ(kDeepSeekV3HiddenBytes, 14336u);
  const RouterSpec s;
  EXPECT_EQ(s.experts, 256u);
  EXPECT_EQ(s.top_k, 8u);
}

TEST(TokenRouting, ExpertsLiveInContiguousBlocks) {
  std::map<int, std::vector<uint32_t>> owned;
  for (uint32_t e = 0; e < 10; ++e) owned[rank_of_expert(e, 10, 3)].push_back(e);
  EXPECT_EQ(owned[0], (std::vector<uint32_t>{0, 1, 2, 3}));  // 10 = 4 + 3 + 3
  EXPECT_EQ(owned[1], (std::vector<uint32_t>{4, 5, 6}));
  EXPECT_EQ(owned[2], (std::vector<uint32_t>{7, 8, 9}));
  EXPECT_EQ(rank_of_expert(255, 256, 8), 7);
  EXPECT_EQ(rank_of_expert(32, 256, 8), 1);
}

TEST(TokenRouting, SeededTopKDistinctAndOncePerRank) {
  const Routing a = route(spec(), 8, 3), again = route(spec(), 8, 3), other = route(spec(), 8, 4);
  EXPECT_EQ(a.experts, again.experts) << "the same seed routes the same way";
  EXPECT_NE(a.experts, other.experts) << "each source rank draws its own";
  ASSERT_EQ(a.experts.size(), 4096u);
  for (size_t t = 0; t < a.experts.size(); ++t) {
    const auto& e = a.experts[t];
    ASSERT_EQ(e.size(), 8u);
    EXPECT_TRUE(std::is_sorted(e.begin(), e.end()));
    EXPECT_EQ(std::set<uint32_t>(e.begin(), e.end()).size(), 8u) << "token " << t << ": top-k distinct";
    std::set<int> ranks;
    for (uint32_t x : e) ranks.insert(rank_of_expert(x, 256, 8));
    EXPECT_EQ(a.destinations[t], std::vector<int>(ranks.begin(), ranks.end())) << "once per rank, ascending";
  }
}

TEST(TokenRouting, UniformIsEvenAndZipfIsSkewed) {
  for (Skew skew : {Skew::kUniform, Skew::kZipf}) {
    std::vector<uint64_t> per_expert(256, 0);
    for (const auto& e : route(spec(skew), 8, 0).experts)
      for (uint32_t x : e) ++per_expert[x];
    const auto [lo, hi] = std::minmax_element(per_expert.begin(), per_expert.end());
    if (skew == Skew::kUniform) {
      // 4096 x 8 / 256 = 128 picks per expert on average; a few standard deviations either way.
      EXPECT_GT(*lo, 80u);
      EXPECT_LT(*hi, 180u);
    } else {
      EXPECT_GT(*hi, 10 * std::max<uint64_t>(*lo, 1)) << "the hottest expert far above the coldest";
    }
  }
}

TEST(TokenRouting, ReceiveBlocksTileEachBufferAndLocalCopiesAreApart) {
  const int ranks = 4;
  std::vector<Routing> all;
  for (int r = 0; r < ranks; ++r) all.push_back(route(spec(), ranks, r));
  const TokenLayout layout(all);
  uint64_t sends = 0;
  for (const Routing& r : all)
    for (const auto& to : r.destinations) sends += to.size();
  EXPECT_EQ(layout.crossing() + layout.local(), sends);
  EXPECT_GT(layout.local(), 0u);
  for (int d = 0; d < ranks; ++d) {
    uint64_t expected_offset = 0;
    for (int s = 0; s < ranks; ++s) {
      EXPECT_EQ(layout.block_offset(s, d), expected_offset) << s << "->" << d;
      const std::vector<uint64_t> slots = slots_in_block(all[size_t(s)], d);
      uint64_t next = 0;
      for (size_t t = 0; t < slots.size(); ++t) {
        const bool sent = std::binary_search(all[size_t(s)].destinations[t].begin(), all[size_t(s)].destinations[t].end(), d);
        EXPECT_EQ(slots[t], sent ? next++ : kNotSent);
      }
      EXPECT_EQ(next, layout.count(s, d)) << "a block holds exactly the tokens sent";
      expected_offset += layout.count(s, d);
    }
    EXPECT_EQ(layout.received(d), expected_offset);
  }
}

TEST(TokenRouting, RefusesWhatCannotRoute) {
  RouterSpec s = spec();
  EXPECT_EQ(s.problem(8), "");
  s.top_k = 300;
  EXPECT_NE(s.problem(8).find("top_k 300"), std::string::npos);
  s = spec();
  EXPECT_NE(s.problem(512).find("256 experts"), std::string::npos);
  s.skew = Skew::kZipf;
  s.zipf_exponent = 0;
  EXPECT_NE(s.problem(8).find("Zipf"), std::string::npos);
}

}  // namespace
