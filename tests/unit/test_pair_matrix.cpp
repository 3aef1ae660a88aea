// The all-pairs view: matrices assembled from the run's cases (stated here as v2 rows and read
// back), the rounds-vs-alone agreement, the suspect pairs and their JSON for the results file.
#include <gtest/gtest.h>

#include <algorithm>

#include "case_reader.hpp"
#include "example_results.hpp"
#include "matrix_rows.hpp"
#include "results/pair_matrix.hpp"
#include "results/summary.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;
using namespace p2pbench::testing;

struct Figure {
  int src, dst;
  double gbps;
};

// Cross-GPU pairs near 390 GB/s but 2->1 at 300; the same-GPU pairs at a local copy's 1500.
const std::vector<Figure> kSequential = {{0, 2, 391}, {0, 3, 390}, {1, 2, 392}, {1, 3, 389}, {2, 0, 393}, {2, 1, 300},
                                         {3, 0, 390}, {3, 1, 391}, {0, 1, 1500}, {1, 0, 1500}, {2, 3, 1500}, {3, 2, 1500}};

std::vector<json> sequential_rows(const std::string& method = "ce") {
  std::vector<json> rows;
  RowSpec s;
  s.method = method;
  for (const Figure& f : kSequential) rows.push_back(row(s, {flow(f.src, f.dst, f.gbps)}));
  rows.back()["flows"][0]["same_device"] = false;  // 3->2: only the meta says it is one GPU
  return rows;
}

// Rounds of disjoint pairs (no GPU twice), then the alone check of 0->2 and 3->0.
std::vector<json> rounds_rows() {
  const std::vector<std::vector<Figure>> rounds = {{{0, 2, 385}, {1, 3, 384}}, {{2, 0, 386}, {3, 1, 387}},
                                                   {{0, 3, 383}, {1, 2, 382}}, {{3, 0, 380}, {2, 1, 381}},
                                                   {{0, 1, 1400}, {2, 3, 1400}}, {{1, 0, 1400}, {3, 2, 1400}}};
  std::vector<json> rows;
  RowSpec s;
  s.schedule = "rounds";
  for (size_t i = 0; i < rounds.size(); ++i) {
    s.round = int(i);
    std::vector<json> flows;
    for (const Figure& f : rounds[i]) flows.push_back(flow(f.src, f.dst, f.gbps));
    rows.push_back(row(s, flows));
  }
  RowSpec alone;
  alone.schedule = "alone_check";
  rows.push_back(row(alone, {flow(0, 2, 390)}));
  rows.push_back(row(alone, {flow(3, 0, 400)}));
  return rows;
}

const PairMatrix& only(const std::vector<PairMatrix>& matrices, const std::string& schedule) {
  const auto it = std::find_if(matrices.begin(), matrices.end(), [&](const PairMatrix& m) { return m.key.schedule == schedule; });
  if (it == matrices.end()) throw std::runtime_error("no " + schedule + " matrix");
  return *it;
}

TEST(PairLinks, FromTheGroupMeta) {
  const PairLinks links = pair_links_from_meta(group_meta());
  EXPECT_EQ(links.ranks, 4);
  EXPECT_EQ(links.class_of(0, 2), "nvlink NV18");
  EXPECT_EQ(links.class_of(0, 1), "same_device X");
  EXPECT_TRUE(links.is_same_device(3, 2));
  EXPECT_FALSE(links.is_same_device(1, 2));
  EXPECT_EQ(links.class_of(0, 7), "unknown");
  json listed = group_meta();
  listed["group"]["ranks"] = {0, 1, 2, 3, 4, 5};  // a list of ranks counts as well as a number
  EXPECT_EQ(pair_links_from_meta(listed).ranks, 6);
  EXPECT_EQ(pair_links_from_meta(json::object(), 8).ranks, 8) << "the caller's count where the meta has none yet";
}

TEST(PairLinks, AVersionOneMetaStandsForThePairZeroOne) {
  json v1 = example_meta();  // as a version 1 file has it: no group, no pairs
  v1.erase("group");
  v1.erase("pairs");
  const PairLinks links = pair_links_from_meta(v1);
  EXPECT_EQ(links.ranks, 2);
  EXPECT_EQ(links.class_of(1, 0), "unknown");  // the example has no topology
  json meta = v1;
  meta["topology"] = {{"available", true}, {"link_type", "nvlink"}, {"topo_label", "NV18"}};
  EXPECT_EQ(pair_links_from_meta(meta).class_of(1, 0), "nvlink NV18");
}

TEST(PairMatrix, SequentialUniFourRanksOnTwoGpus) {
  const auto matrices = assemble_matrices(cases_from_rows(sequential_rows()), pair_links_from_meta(group_meta()));
  ASSERT_EQ(matrices.size(), 1u);
  const PairMatrix& m = matrices[0];
  EXPECT_EQ(m.key.title(), "ce push uni, 1 GiB, sequential");
  ASSERT_EQ(m.ranks, 4);
  EXPECT_EQ(m.at(0, 2).state, CellState::kMeasured);
  EXPECT_DOUBLE_EQ(m.at(0, 2).median_gbps, 391);
  EXPECT_DOUBLE_EQ(m.at(2, 1).median_gbps, 300);
  for (auto [src, dst] : {std::pair{0, 1}, {1, 0}, {2, 3}, {3, 2}}) {
    EXPECT_EQ(m.at(src, dst).state, CellState::kSameDevice) << src << "->" << dst;
    EXPECT_EQ(m.at(src, dst).median_gbps, 0) << "a same-GPU cell carries no P2P figure";
  }
  EXPECT_EQ(m.at(1, 1).state, CellState::kMissing);
  EXPECT_EQ(m.count(CellState::kMeasured), 8u);
  EXPECT_EQ(m.count(CellState::kSameDevice), 4u);
}

TEST(PairMatrix, BidirRowsFillBothCellsAndShapesSeparateMatrices) {
  RowSpec s;
  s.method = "ldst";
  s.mode = "bidir";
  s.blocks = 132;
  std::vector<json> rows = {row(s, {flow(0, 2, 370), flow(2, 0, 371)})};
  s.blocks = 8;
  rows.push_back(row(s, {flow(0, 2, 200), flow(2, 0, 201)}));
  const auto matrices = assemble_matrices(cases_from_rows(rows), pair_links_from_meta(group_meta()));
  ASSERT_EQ(matrices.size(), 2u);
  EXPECT_EQ(matrices[0].key.shape, "blocks:132");
  EXPECT_EQ(matrices[0].key.title(), "ldst push bidir, 1 GiB (blocks:132), sequential");
  EXPECT_DOUBLE_EQ(matrices[0].at(0, 2).median_gbps, 370);
  EXPECT_DOUBLE_EQ(matrices[0].at(2, 0).median_gbps, 371);
  EXPECT_DOUBLE_EQ(matrices[1].at(2, 0).median_gbps, 201);
  EXPECT_EQ(matrices[0].at(0, 3).state, CellState::kMissing);
}

TEST(PairMatrix, RoundsGiveEveryFlowOfTheRoundAndAloneChecksTheirOwnMatrix) {
  const auto matrices = assemble_matrices(cases_from_rows(rounds_rows()), pair_links_from_meta(group_meta()));
  ASSERT_EQ(matrices.size(), 2u);
  const PairMatrix& rounds = only(matrices, "rounds");
  EXPECT_EQ(rounds.count(CellState::kMeasured), 8u);
  EXPECT_EQ(rounds.count(CellState::kSameDevice), 4u);
  EXPECT_DOUBLE_EQ(rounds.at(1, 3).median_gbps, 384);
  EXPECT_DOUBLE_EQ(rounds.at(2, 1).median_gbps, 381);
  const PairMatrix& alone = only(matrices, "alone_check");
  EXPECT_EQ(alone.count(CellState::kMeasured), 2u);
  EXPECT_DOUBLE_EQ(alone.at(3, 0).median_gbps, 400);
}

TEST(PairMatrix, SkippedAndFailedCellsKeepTheirReason) {
  RowSpec s;
  s.status = "skipped";
  s.error = "pairs across nodes have no IPC path";
  std::vector<json> rows = {row(s, {flow(0, 2, std::nullopt)})};
  s.status = "failed";
  s.error = "verification failed on rank 3";
  rows.push_back(row(s, {flow(1, 3, std::nullopt)}));
  rows.push_back(row(RowSpec{}, {flow(1, 3, 390)}));  // a later figure of the same pair replaces a failure
  rows.push_back(row(s, {flow(0, 3, std::nullopt)}));
  const PairMatrix m = assemble_matrices(cases_from_rows(rows), pair_links_from_meta(group_meta()))[0];
  EXPECT_EQ(m.at(0, 2).state, CellState::kSkipped);
  EXPECT_EQ(m.at(0, 2).reason, "pairs across nodes have no IPC path");
  EXPECT_EQ(m.at(1, 3).state, CellState::kMeasured);
  EXPECT_EQ(m.at(0, 3).state, CellState::kFailed);
}

TEST(PairMatrix, PatternsLatencyAndHostLinkRowsAreNoMatrixRows) {
  RowSpec s;
  s.pattern = "one_to_all";
  s.schedule.reset();
  json pattern = row(s, {flow(0, 2, 300), flow(0, 3, 300)});
  RowSpec latency;
  latency.method = "latency_signal";
  json chase = row(latency, {flow(0, 2, std::nullopt)});
  chase["latency_us"] = stats_around(1.0);
  EXPECT_FALSE(is_matrix_case(case_from_row(pattern)->spec));
  EXPECT_FALSE(is_matrix_case(case_from_row(chase)->spec));
  EXPECT_TRUE(assemble_matrices(cases_from_rows({pattern, chase}), pair_links_from_meta(group_meta())).empty());
  RowSpec sampled;
  sampled.pattern = "sampled";
  sampled.schedule.reset();
  const json pick = row(sampled, {flow(1, 2, 390)});
  EXPECT_TRUE(is_matrix_case(case_from_row(pick)->spec));
  EXPECT_EQ(matrix_key_of(case_from_row(pick)->spec).schedule, "sampled");
}

TEST(PairMatrix, VersionOneRowsReadAsATwoRankMatrix) {
  CaseSpec uni = spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 30);
  std::vector<json> rows = {result_row(uni, ok_outcome(390))};
  uni.flows = {{1, 0}};
  rows.push_back(result_row(uni, ok_outcome(380, 10, {1, 0})));
  const auto matrices = assemble_matrices(cases_from_rows(rows), pair_links_from_meta(example_meta()));
  ASSERT_EQ(matrices.size(), 1u);
  EXPECT_EQ(matrices[0].ranks, 2);
  EXPECT_NEAR(matrices[0].at(0, 1).median_gbps, 390 * 1.0045, 1e-9);  // the median of ok_outcome's samples
  EXPECT_NEAR(matrices[0].at(1, 0).median_gbps, 380 * 1.0045, 1e-9);
}

TEST(RoundsAgreement, AloneChecksFirstThenTheSequentialMatrix) {
  std::vector<json> rows = sequential_rows();
  for (const json& r : rounds_rows()) rows.push_back(r);
  const auto agreement = rounds_agreement(assemble_matrices(cases_from_rows(rows), pair_links_from_meta(group_meta())));
  ASSERT_EQ(agreement.size(), 1u);
  EXPECT_EQ(agreement[0].key.schedule, "rounds");
  ASSERT_EQ(agreement[0].pairs.size(), 8u) << "every cross-GPU pair; never a same-GPU one";
  const PairAgreement& first = agreement[0].pairs[0];  // (src, dst) order: 0->2 first
  EXPECT_EQ(first.src_rank, 0);
  EXPECT_EQ(first.dst_rank, 2);
  EXPECT_EQ(first.alone_from, "alone_check");
  EXPECT_DOUBLE_EQ(first.alone_gbps, 390);  // the alone check's 390, not the sequential 391
  EXPECT_NEAR(first.difference_pct, 100.0 * (385 - 390) / 390.0, 1e-9);
  const auto two_one = std::find_if(agreement[0].pairs.begin(), agreement[0].pairs.end(),
                                    [](const PairAgreement& p) { return p.src_rank == 2 && p.dst_rank == 1; });
  ASSERT_NE(two_one, agreement[0].pairs.end());
  EXPECT_EQ(two_one->alone_from, "sequential");
  EXPECT_NEAR(two_one->difference_pct, 100.0 * (381 - 300) / 300.0, 1e-9);
  EXPECT_NEAR(agreement[0].max_abs_difference_pct(), 27.0, 1e-9);
}

TEST(RoundsAgreement, OnlyThePairsCheckedAloneWithoutASequentialMatrix) {
  const auto agreement = rounds_agreement(assemble_matrices(cases_from_rows(rounds_rows()), pair_links_from_meta(group_meta())));
  ASSERT_EQ(agreement.size(), 1u);
  ASSERT_EQ(agreement[0].pairs.size(), 2u);
  EXPECT_EQ(agreement[0].pairs[1].src_rank, 3);
  EXPECT_NEAR(agreement[0].pairs[1].difference_pct, -5.0, 1e-9);
  EXPECT_NEAR(agreement[0].max_abs_difference_pct(), 5.0, 1e-9);
  EXPECT_TRUE(rounds_agreement(assemble_matrices(cases_from_rows(sequential_rows()), pair_links_from_meta(group_meta()))).empty());
}

TEST(SuspectPairs, BelowTheMedianOfTheSameLinkClassRankedByShortfall) {
  std::vector<json> rows = sequential_rows();
  rows[0]["flows"][0]["samples_gbps"] = {340.0};  // 0->2: 12.8% below, less than 2->1's 23%
  const PairLinks links = pair_links_from_meta(group_meta());
  const auto suspects = suspect_pairs(assemble_matrices(cases_from_rows(rows), links), links);
  ASSERT_EQ(suspects.size(), 2u);
  EXPECT_EQ(suspects[0].src_rank, 2);
  EXPECT_EQ(suspects[0].dst_rank, 1);
  EXPECT_EQ(suspects[0].link_class, "nvlink NV18");
  EXPECT_EQ(suspects[0].comparable_cells, 8u) << "the same-GPU cells are not comparable";
  EXPECT_DOUBLE_EQ(suspects[0].class_median_gbps, 390);  // median of 300, 340, 389, 390, 390, 391, 392, 393
  EXPECT_DOUBLE_EQ(suspects[0].reference_gbps, 390);     // median of the others: 340, 389, 390, 390, 391, 392, 393
  EXPECT_NEAR(suspects[0].shortfall_pct, 100.0 * 90 / 390, 1e-9);
  EXPECT_EQ(suspects[1].src_rank, 0);
  EXPECT_NEAR(suspects[1].shortfall_pct, 100.0 * 50 / 390, 1e-9);
  EXPECT_EQ(suspect_pairs(assemble_matrices(cases_from_rows(rows), links), links, 20.0).size(), 1u) << "the margin is a parameter";
}

TEST(SuspectPairs, SmallMessagesAreNotJudged) {
  std::vector<json> rows = sequential_rows();  // 2->1 is 23% below the others at 1 GiB
  const PairLinks links = pair_links_from_meta(group_meta());
  for (json& r : rows) r["bytes"] = kSuspectMinBytes - 1;
  EXPECT_TRUE(judge_pairs(assemble_matrices(cases_from_rows(rows), links), links).empty())
      << "a message under the floor carries the launch's time, not the link's";
  for (json& r : rows) r["bytes"] = kSuspectMinBytes;
  EXPECT_EQ(suspect_pairs(assemble_matrices(cases_from_rows(rows), links), links).size(), 1u);
}

TEST(SuspectPairs, LinkClassesAreComparedOnlyWithThemselves) {
  json meta = group_meta();
  for (json& p : meta["pairs"])  // 2->1 and 1->2 on a PCIe path: 300 is only compared with 392
    if ((p["src_rank"] == 2 && p["dst_rank"] == 1) || (p["src_rank"] == 1 && p["dst_rank"] == 2)) {
      p["link_type"] = "pcie";
      p["topo_label"] = "PXB";
    }
  const PairLinks links = pair_links_from_meta(meta);
  const auto suspects = suspect_pairs(assemble_matrices(cases_from_rows(sequential_rows()), links), links);
  ASSERT_EQ(suspects.size(), 1u);
  EXPECT_EQ(suspects[0].link_class, "pcie PXB");
  EXPECT_EQ(suspects[0].comparable_cells, 2u);
  EXPECT_DOUBLE_EQ(suspects[0].class_median_gbps, 346);
  EXPECT_DOUBLE_EQ(suspects[0].reference_gbps, 392) << "judged against the other pair, not a median it pulls down";
  EXPECT_NEAR(suspects[0].shortfall_pct, 100.0 * 92 / 392, 1e-9);
  EXPECT_TRUE(suspect_pairs(assemble_matrices(cases_from_rows(rounds_rows()), links), links).empty()) << "rounds all near 383";
}

TEST(MatrixReport, JsonForTheResultsFile) {
  std::vector<json> rows = sequential_rows();
  for (const json& r : rounds_rows()) rows.push_back(r);
  const json j = to_json(build_matrix_report(cases_from_rows(rows), pair_links_from_meta(group_meta())));
  ASSERT_EQ(j["matrices"].size(), 3u);  // sequential, rounds, alone_check
  const json& m = j["matrices"][0];
  EXPECT_EQ(m["schedule"], "sequential");
  EXPECT_EQ(m["ranks"], 4);
  EXPECT_DOUBLE_EQ(m["bandwidth_gbps"][2][1].get<double>(), 300);
  EXPECT_TRUE(m["bandwidth_gbps"][0][1].is_null()) << "same GPU: no figure";
  EXPECT_EQ(m["state"][0][1], "same_device");
  EXPECT_EQ(m["state"][2][2], "diagonal");
  EXPECT_EQ(j["rounds_agreement"][0]["pairs"].size(), 8u);
  EXPECT_EQ(j["suspect_pairs"]["margin_pct"], kSuspectMarginPct);
  ASSERT_EQ(j["suspect_pairs"]["pairs"].size(), 1u);
  EXPECT_EQ(j["suspect_pairs"]["pairs"][0]["src_rank"], 2);
  EXPECT_EQ(j["suspect_pairs"]["pairs"][0]["schedule"], "sequential");
  // Every judged cell, worst first, for the report tool to pick its margin from: the 8 cells of
  // two GPUs in the sequential matrix and the 8 in the rounds; alone checks are not judged.
  const json& judged = j["suspect_pairs"]["judged"];
  ASSERT_EQ(judged.size(), 16u);
  EXPECT_EQ(judged[0], j["suspect_pairs"]["pairs"][0]);
  for (size_t i = 1; i < judged.size(); ++i) {
    EXPECT_LE(judged[i]["shortfall_pct"].get<double>(), judged[i - 1]["shortfall_pct"].get<double>());
    EXPECT_NE(judged[i]["schedule"], "alone_check");
  }
}

// Four ranks on two GPUs (0 and 1 share one, 2 and 3 the other), as the summary sees the run.
GroupLayout two_ranks_per_gpu() {
  GroupLayout layout;
  layout.gpu_of_rank = {"gpu-a", "gpu-a", "gpu-b", "gpu-b"};
  layout.node_of_rank = {0, 0, 0, 0};
  return layout;
}

// A ce push uni case of these flows that measured `gbps` (one sample: the median is exact).
CaseResult measured(std::vector<Flow> flows, double gbps, Pattern pattern = Pattern::kMatrix,
                    std::optional<Schedule> schedule = Schedule::kSequential, Method method = Method::kCe) {
  CaseSpec c = spec(method, Direction::kPush, Mode::kUni, 1 << 30);
  c.flows = std::move(flows);
  c.pattern = pattern;
  c.schedule = schedule;
  return {c, ok_outcome(gbps, 1)};
}

TEST(Summary, RoundsAndPatternsAreNoConfigurationsFigure) {
  std::vector<CaseResult> cases;
  for (const Figure& f : kSequential) cases.push_back(measured({{f.src, f.dst}}, f.gbps));
  cases.push_back(measured({{0, 2}, {1, 3}}, 2800, Pattern::kMatrix, Schedule::kRounds));
  cases.push_back(measured({{0, 2}}, 390, Pattern::kMatrix, Schedule::kAloneCheck));
  cases.push_back(measured({{3, 0}}, 400, Pattern::kMatrix, Schedule::kAloneCheck));
  cases.push_back(measured({{0, 2}, {2, 0}}, 2000, Pattern::kAllToAll, std::nullopt));
  EXPECT_FALSE(is_single_pair(cases.back().spec));
  EXPECT_FALSE(is_single_pair(cases[kSequential.size()].spec));
  EXPECT_TRUE(is_single_pair(cases[kSequential.size() + 1].spec));  // an alone check is one pair
  const json summary = summarize_cases(cases, GroupFacts::of(two_ranks_per_gpu()));
  ASSERT_EQ(summary.size(), 1u);
  // The best pair of two GPUs: the alone check of 3->0 (400); not the same-GPU copies (1500),
  // the round's 2800 or the pattern's 2000.
  EXPECT_DOUBLE_EQ(summary[0]["best"]["bandwidth_gbps"].get<double>(), 400);
  EXPECT_EQ(summary[0]["best"]["src_rank"], 3);
  EXPECT_EQ(summary[0]["best"]["dst_rank"], 0);
}

TEST(Comparison, BestMethodFromPairsOfTwoGpusOnly) {
  std::vector<CaseResult> cases = {measured({{0, 2}}, 390), measured({{0, 1}}, 1500)};
  cases.push_back(measured({{0, 2}, {0, 3}}, 740, Pattern::kOneToAll, std::nullopt, Method::kLdst));  // no pair's figure
  GroupFacts facts;
  facts.layout = two_ranks_per_gpu();
  const json comparison = compare_methods(cases, facts);
  ASSERT_EQ(comparison.size(), 1u);
  EXPECT_EQ(comparison[0]["method"], "ce");
  EXPECT_DOUBLE_EQ(comparison[0]["bandwidth_gbps"].get<double>(), 390);
}

}  // namespace
}  // namespace p2pbench
