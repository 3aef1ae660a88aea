// The plan for N ranks: every pattern's flows, the sampled peers' seed, the ranks the config
// names, cross-node and staged skips, destination slots and memory, and the estimate.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "common/errors.hpp"
#include "plan/patterns.hpp"
#include "plan/sweep.hpp"
#include "source_dir.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

Config config_of(json doc) {
  if (!doc.contains("sizes")) doc["sizes"] = {1 << 20};
  return parse_config(doc);
}

// The flow sets of one pattern (the only one configured) in `mode`.
std::vector<FlowSet> sets_of(const json& doc, Mode mode, int ranks) {
  const auto groups = pattern_flow_sets(config_of(doc), mode, GroupLayout::distinct(ranks));
  EXPECT_EQ(groups.size(), 1u);
  return groups.empty() ? std::vector<FlowSet>{} : groups[0];
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Patterns, OrderedPairsInMatrixOrder) {
  EXPECT_EQ(ordered_pairs(2), (std::vector<Flow>{{0, 1}, {1, 0}}));
  EXPECT_EQ(ordered_pairs(3), (std::vector<Flow>{{0, 1}, {1, 0}, {0, 2}, {2, 0}, {1, 2}, {2, 1}}));
  EXPECT_EQ(ordered_pairs(8).size(), 56u);
}

TEST(Patterns, SequentialMatrix) {
  const auto uni = sets_of({{"patterns", {"matrix"}}}, Mode::kUni, 4);
  ASSERT_EQ(uni.size(), 12u);
  for (size_t i = 0; i < uni.size(); ++i) {
    EXPECT_EQ(uni[i].flows, std::vector<Flow>{ordered_pairs(4)[i]});
    EXPECT_EQ(uni[i].schedule, Schedule::kSequential);
  }
  const auto bidir = sets_of({{"patterns", {"matrix"}}}, Mode::kBidir, 4);
  ASSERT_EQ(bidir.size(), 6u);
  EXPECT_EQ(bidir[1].flows, (std::vector<Flow>{{0, 2}, {2, 0}}));
}

TEST(Patterns, RoundsThenSeededAloneChecks) {
  const json doc = {{"matrix", {{"schedule", "rounds"}, {"check_alone_pairs", 5}, {"seed", 7}}}};
  const auto sets = sets_of(doc, Mode::kUni, 6);
  ASSERT_EQ(sets.size(), 10u + 5u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(sets[size_t(i)].schedule, Schedule::kRounds);
    EXPECT_EQ(sets[size_t(i)].round, i);
    EXPECT_EQ(sets[size_t(i)].flows.size(), 3u);
  }
  std::set<std::pair<int, int>> alone;
  for (size_t i = 10; i < sets.size(); ++i) {
    EXPECT_EQ(sets[i].schedule, Schedule::kAloneCheck);
    EXPECT_FALSE(sets[i].round);
    ASSERT_EQ(sets[i].flows.size(), 1u);
    alone.insert({sets[i].flows[0].src_rank, sets[i].flows[0].dst_rank});
  }
  EXPECT_EQ(alone.size(), 5u) << "distinct pairs";
  // The same seed gives the same pairs; another seed (almost surely) others.
  EXPECT_EQ(sets_of(doc, Mode::kUni, 6)[12].flows, sets[12].flows);
  json other = doc;
  other["matrix"]["seed"] = 8;
  std::vector<Flow> a, b;
  for (size_t i = 10; i < 15; ++i) a.push_back(sets[i].flows[0]);
  const auto sets8 = sets_of(other, Mode::kUni, 6);
  for (size_t i = 10; i < 15; ++i) b.push_back(sets8[i].flows[0]);
  EXPECT_NE(a, b);
  // Bidir: the pair both ways alone; more pairs asked than exist: every pair once.
  json all = doc;
  all["matrix"]["check_alone_pairs"] = 100;
  const auto bidir = sets_of(all, Mode::kBidir, 3);
  ASSERT_EQ(bidir.size(), 3u + 3u);
  EXPECT_EQ(bidir[3].flows, (std::vector<Flow>{{0, 1}, {1, 0}}));
}

TEST(Patterns, AloneChecksPreferPairsOnTwoGpusOfOneNode) {
  Config c = config_of({{"matrix", {{"schedule", "rounds"}, {"check_alone_pairs", 100}}}});
  const GroupLayout layout = GroupLayout::from_identities({"A", "A", "B", "B", "C", "D"}, {"h", "h", "h", "h", "h", "h"}, 4);
  const auto groups = pattern_flow_sets(c, Mode::kUni, layout);
  size_t checks = 0;
  for (const FlowSet& s : groups[0]) {
    if (s.schedule != Schedule::kAloneCheck) continue;
    EXPECT_FALSE(layout.same_device(s.flows[0].src_rank, s.flows[0].dst_rank));
    EXPECT_TRUE(layout.same_node(s.flows[0].src_rank, s.flows[0].dst_rank));
    ++checks;
  }
  EXPECT_EQ(checks, 10u) << "node 0: 0 and 1 (GPU A) with 2 and 3 (GPU B), both ways; node 1: 4 <-> 5";
}

TEST(Patterns, SampledPeersAreSeededAndRecorded) {
  const json doc = {{"patterns", {"sampled"}}, {"sampled", {{"peers", 3}, {"seed", 42}}}};
  const auto sets = sets_of(doc, Mode::kUni, 8);
  ASSERT_EQ(sets.size(), 8u * 3);
  std::map<int, std::set<int>> peers;
  for (const FlowSet& s : sets) {
    ASSERT_EQ(s.flows.size(), 1u);
    EXPECT_EQ(s.pattern, Pattern::kSampled);
    EXPECT_NE(s.flows[0].src_rank, s.flows[0].dst_rank);
    peers[s.flows[0].src_rank].insert(s.flows[0].dst_rank);
  }
  for (int r = 0; r < 8; ++r) EXPECT_EQ(peers[r].size(), 3u) << "rank " << r << ": 3 distinct peers";
  // Same seed, same plan (on every rank, every run); another seed, another plan.
  const auto again = sets_of(doc, Mode::kUni, 8);
  json other = doc;
  other["sampled"]["seed"] = 43;
  const auto different = sets_of(other, Mode::kUni, 8);
  bool all_same = true, any_different = false;
  for (size_t i = 0; i < sets.size(); ++i) {
    all_same = all_same && again[i].flows == sets[i].flows;
    any_different = any_different || different[i].flows != sets[i].flows;
  }
  EXPECT_TRUE(all_same);
  EXPECT_TRUE(any_different);
  EXPECT_EQ(config_of(doc).to_json()["sampled"]["seed"], 42);  // recorded in the results' config
  // More peers than the group has: every other rank. Bidir: each pair once, both ways.
  EXPECT_EQ(sets_of(doc, Mode::kUni, 3).size(), 3u * 2);
  const auto bidir = sets_of(doc, Mode::kBidir, 3);
  ASSERT_EQ(bidir.size(), 3u);
  EXPECT_EQ(bidir[0].flows, (std::vector<Flow>{{0, 1}, {1, 0}}));
}

TEST(Patterns, RootedAllToAllRingBisection) {
  auto flows_of_only = [](const json& doc, Mode mode, int ranks) {
    const auto sets = sets_of(doc, mode, ranks);
    EXPECT_EQ(sets.size(), 1u);
    return sets.empty() ? std::vector<Flow>{} : sets[0].flows;
  };
  EXPECT_EQ(flows_of_only({{"patterns", {"one_to_all"}}, {"one_to_all", {{"roots", {2}}}}}, Mode::kUni, 4),
            (std::vector<Flow>{{2, 0}, {2, 1}, {2, 3}}));
  EXPECT_EQ(flows_of_only({{"patterns", {"all_to_one"}}}, Mode::kUni, 3), (std::vector<Flow>{{1, 0}, {2, 0}}));
  EXPECT_EQ(flows_of_only({{"patterns", {"all_to_one"}}}, Mode::kBidir, 3),
            (std::vector<Flow>{{1, 0}, {0, 1}, {2, 0}, {0, 2}}));
  EXPECT_EQ(sets_of({{"patterns", {"one_to_all"}}, {"one_to_all", {{"roots", {0, 3}}}}}, Mode::kUni, 4).size(), 2u);
  EXPECT_EQ(flows_of_only({{"patterns", {"all_to_all"}}}, Mode::kUni, 4), ordered_pairs(4));
  EXPECT_EQ(flows_of_only({{"patterns", {"ring"}}, {"ring", {{"shifts", {3}}}}}, Mode::kUni, 4),
            (std::vector<Flow>{{0, 3}, {1, 0}, {2, 1}, {3, 2}}));
  EXPECT_EQ(flows_of_only({{"patterns", {"ring"}}}, Mode::kBidir, 3),
            (std::vector<Flow>{{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 0}, {0, 2}}));
  // Bisection: uni first half -> second half, then back; bidir both at once; odd: last rank out.
  const auto uni = sets_of({{"patterns", {"bisection"}}}, Mode::kUni, 5);
  ASSERT_EQ(uni.size(), 2u);
  EXPECT_EQ(uni[0].flows, (std::vector<Flow>{{0, 2}, {1, 3}}));
  EXPECT_EQ(uni[1].flows, (std::vector<Flow>{{2, 0}, {3, 1}}));
  EXPECT_EQ(flows_of_only({{"patterns", {"bisection"}}}, Mode::kBidir, 4), (std::vector<Flow>{{0, 2}, {2, 0}, {1, 3}, {3, 1}}));
}

TEST(Patterns, BidirRunsOnceWhatGoesBothWaysAlready) {
  // all_to_all, a ring shifted by half the group and a symmetric flows list are their own
  // reverse: bidir would repeat the uni case, so they run in bidir only where uni is not measured.
  const json doc = {{"patterns", {"all_to_all", "ring", "flows"}}, {"ring", {{"shifts", {2, 1, 3}}}},
                    {"flows", {{{0, 1}, {1, 0}}, {{0, 2}}}}, {"sizes", {4096}}};
  const auto with_uni = pattern_flow_sets(config_of(doc), Mode::kBidir, GroupLayout::distinct(4));
  EXPECT_TRUE(with_uni[0].empty());
  EXPECT_EQ(with_uni[1].size(), 1u) << "shift 2 is uni's; shifts 1 and 3 are one bidir case";
  ASSERT_EQ(with_uni[2].size(), 1u);
  EXPECT_EQ(with_uni[2][0].flows, (std::vector<Flow>{{0, 2}, {2, 0}}));
  json bidir_only = doc;
  bidir_only["modes"] = {"bidir"};
  const auto without_uni = pattern_flow_sets(config_of(bidir_only), Mode::kBidir, GroupLayout::distinct(4));
  EXPECT_EQ(without_uni[0].size(), 1u);
  EXPECT_EQ(without_uni[1].size(), 2u);
}

TEST(Patterns, RanksTheGroupLacksAreInputErrorsNamingTheKey) {
  const json flows = {{"patterns", {"flows"}}, {"flows", {{{0, 1}}, {{0, 9}, {1, 2}}}}};
  std::string why = error_of([&] { expand_cases(config_of(flows), GroupLayout::distinct(8)); });
  EXPECT_NE(why.find("flows[1][0] = [0, 9]"), std::string::npos) << why;
  EXPECT_NE(why.find("rank 9 does not exist: the group has 8 ranks (0..7)"), std::string::npos) << why;
  EXPECT_NO_THROW(expand_cases(config_of(flows), GroupLayout::distinct(10)));
  why = error_of([&] { expand_cases(config_of({{"patterns", {"one_to_all"}}, {"one_to_all", {{"roots", {0, 4}}}}}),
                                    GroupLayout::distinct(4)); });
  EXPECT_NE(why.find("one_to_all.roots[1] = 4"), std::string::npos) << why;
  why = error_of([&] { expand_cases(config_of({{"patterns", {"ring"}}, {"ring", {{"shifts", {1, 4}}}}}), GroupLayout::distinct(4)); });
  EXPECT_NE(why.find("ring.shifts[1] = 4"), std::string::npos) << why;
  why = error_of([&] { count_cases(config_of(flows), GroupLayout::distinct(2)); });
  EXPECT_NE(why.find("flows[1][0]"), std::string::npos) << "counting checks too: " << why;
}

TEST(Plan, MethodsOfEveryKindOnThreeRanks) {
  const Config c = config_of({{"methods", {"ce", "h2d", "latency_ce", "atomic", "interference"}},
                              {"modes", {"uni"}}, {"directions", {"push"}}, {"sizes", {4096}},
                              {"latency", {{"payload_bytes", {4}}}},
                              {"atomic", {{"types", {"u32"}}, {"patterns", {"distinct"}}}},
                              {"interference", {{"workloads", {"hbm"}}, {"engines", {"ce"}}}}});
  const auto cases = expand_cases(c, GroupLayout::distinct(3));
  std::map<Method, std::vector<std::vector<Flow>>> flows;
  for (const CaseSpec& k : cases) flows[k.method].push_back(k.flows);
  std::vector<std::vector<Flow>> pairs;
  for (const Flow& f : ordered_pairs(3)) pairs.push_back({f});
  EXPECT_EQ(flows[Method::kCe], pairs);
  EXPECT_EQ(flows[Method::kLatencyCe], pairs);
  EXPECT_EQ(flows[Method::kAtomic], pairs);
  EXPECT_EQ(flows[Method::kH2d], (std::vector<std::vector<Flow>>{{{0, 0}}, {{1, 1}}, {{2, 2}}}));
  EXPECT_EQ(flows[Method::kInterference], (std::vector<std::vector<Flow>>{{{0, 1}}}));
  EXPECT_EQ(count_cases(c, GroupLayout::distinct(3)), cases.size());
}

TEST(Plan, CountAgreesWithExpansionForEveryShippedConfigAndGroupSize) {
  for (const char* name : {"matrix.json", "patterns.json", "matrix-sizes.json", "default.json", "baselines.json", "latency.json"}) {
    const Config c = parse_config(read_json_file(std::string(test_source_dir()) + "/configs/" + name, "--config"));
    for (int n = 2; n <= 9; ++n) {
      const GroupLayout layout = GroupLayout::distinct(n);
      const auto cases = expand_cases(c, layout);
      EXPECT_EQ(count_cases(c, layout), cases.size()) << name << " on " << n;
      std::set<std::string> names;
      for (const CaseSpec& k : cases) names.insert(k.name());
      EXPECT_EQ(names.size(), cases.size()) << name << " on " << n << ": names must be unique";
    }
  }
}

TEST(Plan, MatrixJsonRunsEveryPairOfEightGpusInRounds) {
  const Config c = parse_config(read_json_file(std::string(test_source_dir()) + "/configs/matrix.json", "--config"));
  const auto cases = expand_cases(c, GroupLayout::distinct(8));
  // 3 methods x 2 directions x (14 rounds + 4 alone checks)
  ASSERT_EQ(cases.size(), 3u * 2 * 18);
  std::set<std::pair<int, int>> covered;
  for (size_t i = 0; i < 18; ++i)
    for (const Flow& f : cases[i].flows)
      if (cases[i].schedule == Schedule::kRounds) covered.insert({f.src_rank, f.dst_rank});
  EXPECT_EQ(covered.size(), 56u);
  EXPECT_EQ(cases[0].name().find("ce/push/uni/matrix:rounds/round:0/"), 0u) << cases[0].name();
}

// Two processes on one GPU take turns unless they are MPS clients: the ping-pong runs only then,
// and SM partitions only without MPS.
TEST(GroupSkip, SharedGpuRunsBothSidesOfAPingPongOnlyUnderMps) {
  GroupLayout layout = GroupLayout::from_identities({"g", "g"}, {"h", "h"});
  CaseSpec c;
  c.method = Method::kLatencySignal;
  EXPECT_NE(group_skip_reason(c, layout).value_or("").find("cannot run at once"), std::string::npos);
  c.method = Method::kInterference;
  c.sm_partition = 8;
  EXPECT_FALSE(group_skip_reason(c, layout));
  layout.all_mps_clients = true;
  EXPECT_NE(group_skip_reason(c, layout).value_or("").find("not kept under MPS"), std::string::npos);
  c.sm_partition = 0;
  EXPECT_FALSE(group_skip_reason(c, layout));
  c.method = Method::kLatencySignal;
  EXPECT_FALSE(group_skip_reason(c, layout));
}

TEST(GroupSkip, CrossNodeNeedsNcclAndStagedOneFlowPerRank) {
  const GroupLayout layout = GroupLayout::from_identities({"a", "b", "c", "d"}, {"h", "h", "h", "h"}, 2);
  CaseSpec c;
  c.flows = {{0, 1}};
  EXPECT_FALSE(group_skip_reason(c, layout));
  c.flows = {{1, 2}};
  EXPECT_EQ(group_skip_reason(c, layout), "rank 1 and rank 2 are on different nodes (hosts, or PID namespaces of one host, which CUDA IPC cannot cross): no CUDA IPC path (nccl, nccl_reduce_scatter, nccl_all_gather, nccl_all_reduce, nccl_all_to_all runs it)");
  for (Method m : {Method::kLdst, Method::kTma, Method::kStaged, Method::kAtomic, Method::kLatencyRead}) {
    c.method = m;
    EXPECT_TRUE(group_skip_reason(c, layout)) << to_string(m);
  }
  c.method = Method::kNccl;
  EXPECT_FALSE(group_skip_reason(c, layout));
  c.method = Method::kH2d;
  c.flows = {{3, 3}};
  EXPECT_FALSE(group_skip_reason(c, layout));
  c.method = Method::kStaged;
  c.flows = {{0, 1}, {1, 0}};  // bidir: one flow out and one in per rank
  EXPECT_FALSE(group_skip_reason(c, GroupLayout::distinct(4)));
  c.flows = {{0, 1}, {0, 2}};
  EXPECT_NE(group_skip_reason(c, GroupLayout::distinct(4)).value_or("").find("rank 0 sends more than one flow"), std::string::npos);
  c.flows = {{1, 0}, {2, 0}};
  EXPECT_NE(group_skip_reason(c, GroupLayout::distinct(4)).value_or("").find("rank 0 receives more than one flow"), std::string::npos);
}

TEST(Memory, DestinationSlotsAndTheFormula) {
  const json doc = {{"methods", {"ce"}}, {"sizes", {"1GiB"}}, {"modes", {"uni"}}, {"patterns", {"matrix", "all_to_all"}}};
  const Config c = config_of(doc);
  const GroupLayout eight = GroupLayout::distinct(8);
  const auto cases = expand_cases(c, eight);
  EXPECT_EQ(destination_slots(cases), 7u);
  const DeviceMemoryNeed need = device_memory_need(c, cases, eight);
  EXPECT_EQ(need.buffer_bytes, 1ull << 30);
  EXPECT_EQ(need.per_rank_bytes, 8ull << 30);
  EXPECT_EQ(need.per_gpu_bytes, (8ull << 30) + (256ull << 20));  // docs/groups.md: fits an 80 GB GPU
  // The matrix alone: one slot; four ranks on two GPUs: two ranks' buffers per GPU.
  const Config matrix = config_of({{"methods", {"ce"}}, {"sizes", {"1GiB"}}});
  const GroupLayout shared = GroupLayout::from_identities({"A", "A", "B", "B"}, {"h", "h", "h", "h"});
  const DeviceMemoryNeed two_per_gpu = device_memory_need(matrix, expand_cases(matrix, shared), shared);
  EXPECT_EQ(two_per_gpu.destination_slots, 1u);
  EXPECT_EQ(two_per_gpu.ranks_on_busiest_gpu, 2u);
  EXPECT_EQ(two_per_gpu.per_gpu_bytes, 2 * 2 * (1ull << 30) + (256ull << 20));
  // A flow's slot: its index among the case's flows into the same rank.
  CaseSpec k;
  k.flows = {{1, 0}, {2, 3}, {2, 0}, {3, 0}};
  EXPECT_EQ(destination_slot(k, 0), 0u);
  EXPECT_EQ(destination_slot(k, 1), 0u);
  EXPECT_EQ(destination_slot(k, 2), 1u);
  EXPECT_EQ(destination_slot(k, 3), 2u);
}

TEST(Memory, SignalRegionsNeverShareAWordBetweenFlowsOrRoles) {
  // one_to_all: rank 0 sends three flows, each the first into its destination (slot 0 there),
  // so regions must not follow the destination slot: rank 0 would use one region three times.
  CaseSpec k;
  k.flows = {{0, 1}, {0, 2}, {0, 3}, {1, 0}};
  EXPECT_EQ(signal_regions({k}), 4u) << "rank 0 takes part in four flows";
  for (int rank = 0; rank < 4; ++rank) {
    std::set<uint64_t> used;
    for (const Flow& f : k.flows)
      if (f.src_rank == rank || f.dst_rank == rank) {
        const uint64_t r = signal_region(k, f, rank);
        EXPECT_LT(r, signal_regions({k}));
        EXPECT_TRUE(used.insert(r).second) << "rank " << rank << " region " << r << " used twice";
      }
  }
  EXPECT_EQ(signal_region(k, {1, 0}, 1), 1u) << "rank 1: the second flow it takes part in";
  CaseSpec bidir;
  bidir.flows = {{0, 1}, {1, 0}};
  EXPECT_EQ(signal_regions({bidir}), 2u) << "each rank sends one flow and receives one";
  EXPECT_EQ(signal_regions({CaseSpec{}}), 1u);
}

TEST(Estimate, FlowsSharingAGpuShareItsLink) {
  const CaseCostModel costs;
  const GroupLayout four = GroupLayout::distinct(4);
  CaseSpec one;
  one.bytes = 1ull << 30;
  one.flows = {{0, 1}};
  const double alone = concurrent_transfer_seconds(one, four, costs);
  EXPECT_NEAR(alone, double(1ull << 30) / (costs.link_gbps * 1e9), 1e-9);
  CaseSpec ring = one;
  ring.flows = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};  // each GPU sends one and receives one
  EXPECT_DOUBLE_EQ(concurrent_transfer_seconds(ring, four, costs), alone);
  CaseSpec fan = one;
  fan.flows = {{0, 1}, {0, 2}, {0, 3}};  // three flows out of GPU 0
  EXPECT_DOUBLE_EQ(concurrent_transfer_seconds(fan, four, costs), 3 * alone);
  CaseSpec ldst = one;  // an SM kernel of 2 blocks moves at most 2 x gbps_per_block
  ldst.method = Method::kLdst;
  ldst.blocks = 2;
  EXPECT_NEAR(concurrent_transfer_seconds(ldst, four, costs), double(1ull << 30) / (2 * costs.gbps_per_block * 1e9), 1e-9);
  // The method says whether its blocks bound it (MethodInfo::cost_per_block), whatever its name.
  for (const MethodInfo& m : method_registry()) {
    CaseSpec c = ldst;
    c.method = m.id;
    const double blocks_bound = double(1ull << 30) / (2 * costs.gbps_per_block * 1e9);
    if (m.kind == MethodKind::kCopy) {
      EXPECT_EQ(concurrent_transfer_seconds(c, four, costs) == blocks_bound, m.cost_per_block) << m.name;
    }
  }
}

TEST(Estimate, RoundsAreLinearAndTheMatrixQuadratic) {
  const Config rounds = parse_config(read_json_file(std::string(test_source_dir()) + "/configs/matrix.json", "--config"));
  auto seconds = [](const Config& c, int n) {
    const GroupLayout layout = GroupLayout::distinct(n);
    return estimate(c, expand_cases(c, layout), layout).seconds;
  };
  EXPECT_LT(seconds(rounds, 8), 60.0) << "the eight-GPU dry run estimate";
  // 2(N - 1) rounds + 4 alone checks: 18 cases a method and direction on 8 GPUs, 10 on 4.
  EXPECT_NEAR(seconds(rounds, 8) / seconds(rounds, 4), 18.0 / 10.0, 0.1);
  json doc = read_json_file(std::string(test_source_dir()) + "/configs/matrix.json", "--config");
  doc["matrix"]["schedule"] = "sequential";
  const Config sequential = parse_config(doc);
  EXPECT_GT(seconds(sequential, 8), 3 * seconds(rounds, 8));
}

// The estimate against the committed runs it was fitted to (and others): within 30% of the
// measured sweep for the bandwidth, host-link and latency configs.
TEST(Estimate, AgreesWithCommittedRuns) {
  for (const char* name : {"default.json", "bidir-sm.json", "ldst-threads.json", "sm-scaling.json", "tma-smem.json",
                           "ce-large.json", "host-link.json", "baselines.json", "atomics.json", "latency.json",
                           "latency-investigation/latency-investigation.json", "equivalents/nvbandwidth-equivalent.json",
                           "equivalents/nccl-tests-equivalent.json"}) {
    const json results = read_json_file(std::string(test_source_dir()) + "/results/h200-nv18/" + name, "results");
    const double measured = results["meta"]["timer_calibration"]["sweep_seconds"].get<double>();
    const Config c = parse_config(results["meta"]["config"]);
    const double estimated = estimate(c, expand_cases(c)).seconds;
    EXPECT_NEAR(estimated, measured, 0.3 * measured) << name;
  }
}

// Two ranks expand every config exactly as before groups (names and order, tests/unit/data).
TEST(TwoRanks, PlansAreTheSameAsBeforeGroups) {
  for (const char* name : {"default", "baselines", "latency", "atomics", "host-link", "interference", "latency-investigation"}) {
    std::ifstream golden(std::string(test_source_dir()) + "/tests/unit/data/two-rank-plans/" + name + ".txt");
    ASSERT_TRUE(golden) << name;
    std::vector<std::string> expected;
    for (std::string line; std::getline(golden, line);) expected.push_back(line);
    const Config c = parse_config(read_json_file(std::string(test_source_dir()) + "/configs/" + name + ".json", "--config"));
    const auto cases = expand_cases(c, GroupLayout::distinct(2));
    std::vector<std::string> names;
    for (const CaseSpec& k : cases) names.push_back(k.name());
    EXPECT_EQ(names, expected) << name;
    const auto one_argument = expand_cases(c);
    ASSERT_EQ(one_argument.size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ(one_argument[i].name(), cases[i].name());
      EXPECT_EQ(one_argument[i].flows, cases[i].flows);
    }
  }
}

}  // namespace
}  // namespace p2pbench
