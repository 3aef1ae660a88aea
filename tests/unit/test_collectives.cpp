// The collectives' arithmetic (nccl-tests' conventions), their figures in a row, and where the
// sweep runs them.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
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
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllToAll, 8), 0.875);  // nccl-tests' alltoall
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

// All-to-all: each rank's input and output are the whole size, a chunk per rank; it rounds as
// all-gather does, and a flow carries one chunk.
TEST(Collectives, AllToAllMovesAChunkPerPairOfRanks) {
  EXPECT_STREQ(to_string(Collective::kAllToAll), "all_to_all");
  const auto s = collective_size(Collective::kAllToAll, 1 << 20, 3);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->chunk_elements, 87380u);
  EXPECT_EQ(s->elements, 3u * 87380u);
  EXPECT_EQ(input_elements(Collective::kAllToAll, *s), s->elements);
  EXPECT_EQ(output_elements(Collective::kAllToAll, *s), s->elements);
  EXPECT_FALSE(collective_size(Collective::kAllToAll, 16, 2));  // 4 f32: no 4-element chunk per rank
  EXPECT_TRUE(collective_size(Collective::kAllToAll, 32, 2));
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

TEST(Collectives, ElementsNameTheirTypeAndSize) {
  EXPECT_STREQ(to_string(CollectiveElement::kF32), "f32");
  EXPECT_STREQ(to_string(CollectiveElement::kBf16), "bf16");
  EXPECT_EQ(element_bytes(CollectiveElement::kF32), 4u);
  EXPECT_EQ(element_bytes(CollectiveElement::kBf16), 2u);
  EXPECT_EQ(vector_elements(CollectiveElement::kF32), 4u);  // 16-byte vectors
  EXPECT_EQ(vector_elements(CollectiveElement::kBf16), 8u);
  EXPECT_EQ(collective_size(Collective::kReduceScatter, 1 << 20, 3)->element, CollectiveElement::kF32);  // the default
}

TEST(Collectives, Bf16ChunksRoundDownToWholeVectorsOfEight) {
  const auto s = collective_size(Collective::kReduceScatter, 1 << 20, 3, CollectiveElement::kBf16);  // 524288 bf16
  ASSERT_TRUE(s);
  EXPECT_EQ(s->element, CollectiveElement::kBf16);
  EXPECT_EQ(s->chunk_elements, 174760u);  // 174762 rounded down to a multiple of 8
  EXPECT_EQ(s->elements, 3u * 174760u);
  EXPECT_EQ(s->bytes, 3u * 174760u * 2u);
  // Whole 16-byte vectors per rank either way: the same bytes as f32's.
  EXPECT_EQ(s->bytes, collective_size(Collective::kReduceScatter, 1 << 20, 3)->bytes);
  EXPECT_FALSE(collective_size(Collective::kReduceScatter, 31, 2, CollectiveElement::kBf16));  // 15 bf16: < 8 a rank
  const auto smallest = collective_size(Collective::kReduceScatter, 32, 2, CollectiveElement::kBf16);
  ASSERT_TRUE(smallest);
  EXPECT_EQ(smallest->chunk_elements, 8u);
  EXPECT_EQ(smallest->bytes, 32u);
}

TEST(Collectives, Bf16AllReduceKeepsWholeElements) {
  const auto s = collective_size(Collective::kAllReduce, 6, 2, CollectiveElement::kBf16);  // 3 bf16
  ASSERT_TRUE(s);
  EXPECT_EQ(s->elements, 3u);
  EXPECT_EQ(s->chunk_elements, 8u);  // ceil(3 / 2) = 2, rounded up to a vector
  EXPECT_EQ(s->bytes, 6u);
  EXPECT_FALSE(collective_size(Collective::kAllReduce, 5, 2, CollectiveElement::kBf16));  // not whole bf16
}

CaseSpec collective_case(const char* method, int ranks, uint64_t bytes) {
  CaseSpec c;
  c.method = *parse_method(method);
  c.pattern = Pattern::kAllToAll;
  c.bytes = bytes;
  c.flows.clear();
  for (int a = 0; a < ranks; ++a)
    for (int b = 0; b < ranks; ++b)
      if (a != b) c.flows.push_back({a, b});
  return c;
}

CaseSpec all_reduce_case(int ranks, uint64_t bytes) { return collective_case("all_reduce_one_shot", ranks, bytes); }

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
  EXPECT_EQ(row["collective"]["element"], "f32");
  EXPECT_EQ(row["collective"]["ranks"], 4);
  EXPECT_DOUBLE_EQ(row["collective"]["bus_factor"].get<double>(), 1.5);
  EXPECT_NEAR(row["collective"]["busbw_gbps"]["median"].get<double>(), 104.8576 * 0.75, 1e-9);  // 20 us
}

TEST(Collectives, Bf16RowSaysItsElementAndCountsItsBytes) {
  const CaseSpec c = collective_case("reduce_scatter_add_bf16", 3, 1 << 20);
  EXPECT_EQ(method_info(c.method).collective_element, CollectiveElement::kBf16);
  CaseOutcome o;
  o.time_us = {10.0};
  o.gbps = {1};
  const CollectiveFigures f = collective_figures(c, o);
  EXPECT_EQ(f.element, CollectiveElement::kBf16);
  ASSERT_TRUE(f.size);
  EXPECT_EQ(f.size->chunk_elements, 174760u);
  ASSERT_EQ(f.algbw_gbps.size(), 1u);
  EXPECT_NEAR(f.algbw_gbps[0], 104.856, 1e-9);  // 3 x 174760 bf16 = 1048560 bytes in 10 us
  GroupFacts facts;
  facts.layout = GroupLayout::distinct(3);
  facts.peak_gbps.assign(3, std::vector<std::optional<double>>(3));
  const nlohmann::json row = result_row(c, o, facts);
  EXPECT_EQ(row["collective"]["element"], "bf16");
  EXPECT_EQ(row["collective"]["operation"], "reduce_scatter");
  EXPECT_EQ(row["collective"]["bytes"], 1048560u);
}

TEST(Collectives, AllToAllRowsSayTheirOperation) {
  for (const char* method : {"nccl_all_to_all", "all_to_all_ce"}) {
    const CaseSpec c = collective_case(method, 2, 1 << 20);
    CaseOutcome o;
    o.time_us = {10.0};
    o.gbps = {1};
    GroupFacts facts;
    facts.layout = GroupLayout::distinct(2);
    facts.peak_gbps.assign(2, std::vector<std::optional<double>>(2));
    const nlohmann::json row = result_row(c, o, facts);
    EXPECT_EQ(row["collective"]["operation"], "all_to_all") << method;
    EXPECT_DOUBLE_EQ(row["collective"]["bus_factor"].get<double>(), 0.5) << method;
    EXPECT_EQ(row["collective"]["bytes"], 1u << 20) << method;
  }
}

// The copy-engine collectives: no SM axis (their rows carry no kernel shape), both ends' streams
// wait for each other through the peer mapping, and the sanitizer cannot run them.
TEST(Collectives, CopyEngineCollectivesTakeNoSm) {
  for (const auto& [name, op] : {std::pair{"all_gather_ce", Collective::kAllGather},
                                 std::pair{"all_to_all_ce", Collective::kAllToAll}}) {
    const std::optional<Method> m = parse_method(name);
    ASSERT_TRUE(m) << name;
    EXPECT_TRUE(is_collective(*m)) << name;
    EXPECT_EQ(method_info(*m).collective, op) << name;
    EXPECT_FALSE(takes_sms(*m)) << name;
    EXPECT_TRUE(axes_of(*m).empty()) << name;
    EXPECT_TRUE(needs_peer_mapping(*m)) << name;
    EXPECT_TRUE(method_info(*m).needs_both_ends_running) << name;
    EXPECT_FALSE(method_info(*m).needs_nccl) << name;
    EXPECT_NE(std::string(method_info(*m).sanitizer_skip), "") << name;
  }
  const std::optional<Method> nccl = parse_method("nccl_all_to_all");
  ASSERT_TRUE(nccl);
  EXPECT_EQ(method_info(*nccl).collective, Collective::kAllToAll);
  EXPECT_TRUE(method_info(*nccl).needs_nccl);
  EXPECT_TRUE(method_info(*nccl).crosses_nodes);
}

TEST(Collectives, FailedCaseHasNoFigures) {
  CaseOutcome o;
  o.status = CaseStatus::kFailed;
  o.time_us = {10.0};
  EXPECT_TRUE(collective_figures(all_reduce_case(2, 1024), o).busbw_gbps.empty());
}

// A reduce-scatter pushed one way at 1 MiB over these patterns.
Config reduce_scatter_over(std::vector<Pattern> patterns) {
  Config config;
  config.methods = {*parse_method("reduce_scatter_two_shot")};
  config.directions = {Direction::kPush};
  config.modes = {Mode::kUni};
  config.sizes = {1 << 20};
  config.plan.patterns = std::move(patterns);
  return config;
}

TEST(Collectives, SweepRunsThemOnlyWhereEveryRankSendsToEveryOther) {
  const Config config = reduce_scatter_over({Pattern::kMatrix, Pattern::kRing, Pattern::kAllToAll});
  const GroupLayout layout = GroupLayout::distinct(4);
  const std::vector<CaseSpec> cases = expand_cases(config, layout);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].pattern, Pattern::kAllToAll);
  EXPECT_EQ(cases[0].flows.size(), 12u);
  EXPECT_EQ(count_cases(config, layout), 1u);
}

// Named but with no flow set it runs on: refused naming the method and why, not an empty sweep.
TEST(Collectives, SweepRefusesACollectiveWithNoCase) {
  const Config config = reduce_scatter_over({Pattern::kMatrix, Pattern::kRing});
  try {
    expand_cases(config, GroupLayout::distinct(4));
    FAIL() << "a collective with no case was planned";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("methods = reduce_scatter_two_shot"), std::string::npos) << what;
    EXPECT_NE(what.find("every rank sends to every other"), std::string::npos) << what;
  }
}

// The all-gathers' claims: a shape axis of theirs only, 16 pieces (stores) and 4 stages (TMA) by
// default, in the case's name (out of range or elsewhere: test_config's ConfigRejects).
nlohmann::json all_gathers(nlohmann::json sections = nlohmann::json::object()) {
  nlohmann::json doc = {{"methods", {"all_gather_put", "all_gather_tma", "reduce_scatter_two_shot"}},
                        {"patterns", {"all_to_all"}},
                        {"sizes", {"1MiB"}}};
  doc.update(sections);
  return doc;
}

TEST(Collectives, TheAllGathersClaimPiecesByDefault) {
  std::vector<std::pair<std::string, std::optional<uint64_t>>> claims;
  for (const CaseSpec& c : expand_cases(parse_config(all_gathers()), GroupLayout::distinct(2)))
    claims.emplace_back(to_string(c.method), c.claim_pieces);
  const std::vector<std::pair<std::string, std::optional<uint64_t>>> want = {
      {"all_gather_put", 16}, {"all_gather_tma", 4}, {"reduce_scatter_two_shot", std::nullopt}};
  EXPECT_EQ(claims, want);
  const auto named = expand_cases(parse_config(all_gathers({{"all_gather_put", {{"claim_pieces", {0, 8}}}}})),
                                  GroupLayout::distinct(2));
  ASSERT_GE(named.size(), 2u);
  EXPECT_EQ(named[0].claim_pieces, 0u);
  EXPECT_EQ(named[0].name().find("/claim"), std::string::npos) << "0, the value before the axis, is not named";
  EXPECT_NE(named[1].name().find("/claim:8"), std::string::npos) << named[1].name();
}

}  // namespace
}  // namespace p2pbench
