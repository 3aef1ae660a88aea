// The collectives' arithmetic (nccl-tests' conventions), their figures in a row, and where the
// sweep runs them.
#include <gtest/gtest.h>

#include "config/config.hpp"
#include "plan/sweep.hpp"
#include "results/case_result.hpp"
#include "results/result_writer.hpp"
#include "vocab/collectives.hpp"

namespace p2pbench {
namespace {

TEST(Collectives, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kNone, 4), 0.0);
}

TEST(Collectives, BandwidthIsBytesOverTimeInDecimalGigabytes) {
  EXPECT_DOUBLE_EQ(algorithm_gbps(1'000'000'000, 0.5), 2.0);
  // 1 GiB all-reduce on 4 ranks in 10 ms: 107.37 GB/s algorithm, x 1.5 on the bus.
  EXPECT_NEAR(algorithm_gbps(1ull << 30, 0.01), 107.374, 1e-3);
  EXPECT_NEAR(bus_gbps(Collective::kAllReduce, 4, 1ull << 30, 0.01), 161.061, 1e-3);
  EXPECT_DOUBLE_EQ(algorithm_gbps(100, 0), 0.0);
}

TEST(Collectives, ReduceScatterAndAllGatherRoundDownToWholeVectorChunks) {
  const auto s = collective_size(Collective::kReduceScatter, 1 << 20, 3);  // 262144 f32 over 3 ranks
  ASSERT_TRUE(s);
  EXPECT_EQ(s->chunk_elements, 87380u);  // 87381 rounded down to a multiple of 4
  EXPECT_EQ(s->elements, 3u * 87380u);
  EXPECT_EQ(s->bytes, 3u * 87380u * 4u);
  EXPECT_EQ(input_elements(Collective::kReduceScatter, *s), s->elements);
  EXPECT_EQ(output_elements(Collective::kReduceScatter, *s), s->chunk_elements);
  EXPECT_EQ(input_elements(Collective::kAllGather, *s), s->chunk_elements);
  EXPECT_EQ(output_elements(Collective::kAllGather, *s), s->elements);
  EXPECT_FALSE(collective_size(Collective::kAllGather, 8, 2));   // 2 f32: no 4-element chunk per rank
  EXPECT_TRUE(collective_size(Collective::kAllGather, 32, 2));
}

TEST(Collectives, AllReduceKeepsItsSizeAndShortensTheLastChunk) {
  const auto s = collective_size(Collective::kAllReduce, 40, 3);  // 10 f32
  ASSERT_TRUE(s);
  EXPECT_EQ(s->elements, 10u);
  EXPECT_EQ(s->chunk_elements, 4u);  // ceil(10 / 3) = 4
  EXPECT_EQ(s->first(0), 0u);
  EXPECT_EQ(s->end(1), 8u);
  EXPECT_EQ(s->first(2), 8u);
  EXPECT_EQ(s->end(2), 10u);
  const auto small = collective_size(Collective::kAllReduce, 8, 4);  // 2 f32 on 4 ranks: chunks 0..2, empty, empty, empty
  ASSERT_TRUE(small);
  EXPECT_EQ(small->end(0), 2u);
  EXPECT_EQ(small->first(3), small->end(3));
  EXPECT_FALSE(collective_size(Collective::kAllReduce, 6, 2));  // not whole f32
}

CaseSpec all_reduce_case(int ranks, uint64_t bytes) {
  CaseSpec c;
  c.method = *parse_method("all_reduce_one_shot");
  c.pattern = Pattern::kAllToAll;
  c.bytes = bytes;
  c.flows.clear();
  for (int a = 0; a < ranks; ++a)
    for (int b = 0; b < ranks; ++b)
      if (a != b) c.flows.push_back({a, b});
  return c;
}

TEST(Collectives, RowCarriesAlgorithmAndBusBandwidth) {
  const CaseSpec c = all_reduce_case(4, 1 << 20);
  CaseOutcome o;
  o.time_us = {10.0, 20.0, 40.0};
  o.gbps = {1, 1, 1};
  const CollectiveFigures f = collective_figures(c, o);
  EXPECT_EQ(f.ranks, 4);
  ASSERT_EQ(f.busbw_gbps.size(), 3u);
  EXPECT_NEAR(f.algbw_gbps[0], 104.8576, 1e-9);  // 1 MiB in 10 us
  EXPECT_NEAR(f.busbw_gbps[0], 104.8576 * 1.5, 1e-9);
  GroupFacts facts;
  facts.layout = GroupLayout::distinct(4);
  facts.peak_gbps.assign(4, std::vector<std::optional<double>>(4));
  const nlohmann::json row = result_row(c, o, facts);
  ASSERT_TRUE(row.contains("collective"));
  EXPECT_EQ(row["collective"]["operation"], "all_reduce");
  EXPECT_EQ(row["collective"]["ranks"], 4);
  EXPECT_DOUBLE_EQ(row["collective"]["bus_factor"].get<double>(), 1.5);
  EXPECT_NEAR(row["collective"]["busbw_gbps"]["median"].get<double>(), 104.8576 * 0.75, 1e-9);  // 20 us
}

TEST(Collectives, FailedCaseHasNoFigures) {
  CaseOutcome o;
  o.status = CaseStatus::kFailed;
  o.time_us = {10.0};
  EXPECT_TRUE(collective_figures(all_reduce_case(2, 1024), o).busbw_gbps.empty());
}

TEST(Collectives, SweepRunsThemOnlyWhereEveryRankSendsToEveryOther) {
  Config config;
  config.methods = {*parse_method("reduce_scatter_two_shot")};
  config.directions = {Direction::kPush};
  config.modes = {Mode::kUni};
  config.sizes = {1 << 20};
  config.plan.patterns = {Pattern::kMatrix, Pattern::kRing, Pattern::kAllToAll};
  const GroupLayout layout = GroupLayout::distinct(4);
  const std::vector<CaseSpec> cases = expand_cases(config, layout);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].pattern, Pattern::kAllToAll);
  EXPECT_EQ(cases[0].flows.size(), 12u);
  EXPECT_EQ(count_cases(config, layout), 1u);
}

}  // namespace
}  // namespace p2pbench
