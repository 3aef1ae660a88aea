// Interference cases without a GPU: the "interference" config section, the case
// expansion, the row fields and the trade table's findings.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "engines/transfer_engine.hpp"
#include "judgement/trade_table.hpp"
#include "example_results.hpp"
#include "results/interference_rows.hpp"
#include "plan/sweep.hpp"
#include "source_dir.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

json doc_with(json section) {
  return json{{"methods", {"interference"}}, {"sizes", {"1GiB"}}, {"interference", std::move(section)}};
}

TEST(InterferenceConfig, DefaultsParseAndRoundTrip) {
  const Config d = parse_config(json{{"methods", {"interference"}}, {"sizes", {"1GiB"}}});
  EXPECT_EQ(d.interference.workloads, (std::vector<std::string>{"gemm", "hbm"}));
  EXPECT_EQ(d.interference.gemm.m, 8192u);
  EXPECT_EQ(d.interference.gemm.operands, "gaussian");  // full entropy unless the config says otherwise
  EXPECT_EQ(d.interference.sm_partitions, (std::vector<uint64_t>{0, 4, 8, 16, 32, 66}));
  EXPECT_FALSE(d.interference.both_gpus_busy);
  EXPECT_FALSE(d.interference.transfer_high_priority);
  const Config c = parse_config(doc_with({{"workloads", {"hbm"}},
                                          {"gemm", {{"m", 4096}, {"k", 1024}, {"operands", "eighths"}}},
                                          {"hbm_bytes", "256MiB"},
                                          {"engines", {"tma"}},
                                          {"sm_partitions", {16, 0}},
                                          {"both_gpus_busy", true},
                                          {"transfer_high_priority", true}}));
  EXPECT_EQ(c.interference.workloads, std::vector<std::string>{"hbm"});
  EXPECT_EQ(c.interference.gemm.m, 4096u);
  EXPECT_EQ(c.interference.gemm.n, 8192u);
  EXPECT_EQ(c.interference.gemm.k, 1024u);
  EXPECT_EQ(c.interference.gemm.operands, "eighths");
  EXPECT_EQ(c.interference.hbm_bytes, 256ull << 20);
  EXPECT_EQ(c.interference.engines, std::vector<Method>{Method::kTma});
  EXPECT_EQ(c.interference.sm_partitions, (std::vector<uint64_t>{16, 0}));
  EXPECT_TRUE(c.interference.both_gpus_busy);
  EXPECT_TRUE(c.interference.transfer_high_priority);
  EXPECT_EQ(parse_config(c.to_json()).to_json(), c.to_json());  // rank 0 broadcasts the effective config
}

struct BadSection {
  const char* name;
  json section;
  const char* key;
  const char* value;
};

class InterferenceRejects : public ::testing::TestWithParam<BadSection> {};

TEST_P(InterferenceRejects, NamingKeyAndValue) {
  const BadSection& p = GetParam();
  try {
    parse_config(doc_with(p.section));
    FAIL() << p.name << " was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(p.key), std::string::npos) << msg;
    EXPECT_NE(msg.find(p.value), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadSections, InterferenceRejects,
    ::testing::Values(
        BadSection{"section not object", json::array({1}), "interference", "[1]"},
        BadSection{"unknown key", {{"workload", {"gemm"}}}, "interference.workload", "gemm"},
        BadSection{"workloads empty", {{"workloads", json::array()}}, "interference.workloads", "[]"},
        BadSection{"workload unknown", {{"workloads", {"gemm", "fft"}}}, "interference.workloads[1]", "fft"},
        BadSection{"workload twice", {{"workloads", {"hbm", "hbm"}}}, "interference.workloads[1]", "hbm"},
        BadSection{"gemm not object", {{"gemm", 8192}}, "interference.gemm", "8192"},
        BadSection{"gemm unknown key", {{"gemm", {{"l", 64}}}}, "interference.gemm.l", "64"},
        BadSection{"gemm m unaligned", {{"gemm", {{"m", 1000}}}}, "interference.gemm.m", "1000"},
        BadSection{"gemm n zero", {{"gemm", {{"n", 0}}}}, "interference.gemm.n", "0"},
        BadSection{"gemm k huge", {{"gemm", {{"k", 131072}}}}, "interference.gemm.k", "131072"},
        BadSection{"gemm k text", {{"gemm", {{"k", "8192"}}}}, "interference.gemm.k", "8192"},
        BadSection{"gemm operands unknown", {{"gemm", {{"operands", "uniform"}}}}, "interference.gemm.operands", "uniform"},
        BadSection{"gemm operands number", {{"gemm", {{"operands", 17}}}}, "interference.gemm.operands", "17"},
        BadSection{"hbm bytes small", {{"hbm_bytes", 4096}}, "interference.hbm_bytes", "4096"},
        BadSection{"hbm bytes text", {{"hbm_bytes", "lots"}}, "interference.hbm_bytes", "lots"},
        BadSection{"engines not list", {{"engines", "ce"}}, "interference.engines", "ce"},
        BadSection{"engine unknown", {{"engines", {"ce", "staged"}}}, "interference.engines[1]", "staged"},
        BadSection{"engine twice", {{"engines", {"tma", "tma"}}}, "interference.engines[1]", "tma"},
        // Both ends run but the loop cannot run them: a router of many flows, a collective of every rank.
        BadSection{"engine routes tokens", {{"engines", {"put_signal_ce", "tokens_dispatch_ldst"}}},
                   "interference.engines[1]", "tokens_dispatch_ldst"},
        BadSection{"engine an SM collective", {{"engines", {"reduce_scatter_add"}}}, "interference.engines[0]",
                   "reduce_scatter_add"},
        BadSection{"priority not a flag", {{"transfer_high_priority", 1}}, "interference.transfer_high_priority", "1"},
        BadSection{"partitions empty", {{"sm_partitions", json::array()}}, "interference.sm_partitions", "[]"},
        BadSection{"partition negative", {{"sm_partitions", {0, -8}}}, "interference.sm_partitions[1]", "-8"},
        BadSection{"partition huge", {{"sm_partitions", {4096}}}, "interference.sm_partitions[0]", "4096"},
        BadSection{"partition fraction", {{"sm_partitions", {8.5}}}, "interference.sm_partitions[0]", "8.5"},
        BadSection{"partition twice", {{"sm_partitions", {8, 8}}}, "interference.sm_partitions[1]", "8"},
        BadSection{"both busy not bool", {{"both_gpus_busy", "yes"}}, "interference.both_gpus_busy", "yes"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

TEST(InterferenceConfig, ShippedConfigExpandsToOneCurvePerEngine) {
  const Config c = parse_config(read_json_file(std::string(test_source_dir()) + "/configs/interference.json", "--config"));
  validate_kernel_axes(c);
  const std::vector<CaseSpec> cases = expand_cases(c);
  // 2 workloads x (ce unpartitioned + ldst and tma at every partition).
  const size_t per_workload = 1 + 2 * c.interference.sm_partitions.size();
  EXPECT_EQ(cases.size(), c.interference.workloads.size() * per_workload);
  std::set<std::string> names;
  for (const CaseSpec& k : cases) {
    EXPECT_EQ(k.method, Method::kInterference);
    ASSERT_TRUE(k.engine && k.workload && k.sm_partition);
    if (*k.engine == Method::kCe) {
      EXPECT_EQ(*k.sm_partition, 0);
    }
    EXPECT_EQ(transfer_case_of(k).method, *k.engine);
    EXPECT_FALSE(transfer_case_of(k).sm_partition.has_value());
    names.insert(k.name());
  }
  EXPECT_EQ(names.size(), cases.size()) << "every case has its own name";
  // Both GPUs busy: bidir, the GEMM beside ce and ldst (unpartitioned and 16 SMs).
  const Config busy = parse_config(
      read_json_file(std::string(test_source_dir()) + "/configs/interference-both-busy.json", "--config"));
  const std::vector<CaseSpec> busy_cases = expand_cases(busy);
  ASSERT_EQ(busy_cases.size(), 3u);
  for (const CaseSpec& k : busy_cases) {
    EXPECT_EQ(k.mode, Mode::kBidir);
    EXPECT_TRUE(k.both_gpus_busy.value_or(false));
    EXPECT_EQ(k.src_rank(), -1);
  }
}

// A put with signal may be the transfer: its receiver runs on the other GPU. It writes the
// receiver's memory, so it runs at push only whatever the directions, and the copy engine's
// sender takes no SMs, so it runs unpartitioned only. So does NCCL's send/receive (one way, its
// own grid).
TEST(InterferenceConfig, PutSignalSendersAndNcclMayBeTheTransferAtPushOnly) {
  json doc = doc_with({{"workloads", {"gemm"}}, {"engines", {"put_signal_ce", "put_signal_ldst", "ce", "nccl"}},
                       {"sm_partitions", {0, 8}}});
  doc["directions"] = {"push", "pull"};
  doc["modes"] = {"uni"};
  const Config c = parse_config(doc);
  validate_kernel_axes(c);
  EXPECT_EQ(c.interference.engines, (std::vector<Method>{*parse_method("put_signal_ce"), *parse_method("put_signal_ldst"),
                                                         Method::kCe, Method::kNccl}));
  const std::vector<CaseSpec> cases = expand_cases(c);
  ASSERT_EQ(cases.size(), count_cases(c));
  std::map<std::string, std::vector<std::pair<Direction, int>>> runs;
  for (const CaseSpec& k : cases) {
    runs[to_string(*k.engine)].push_back({k.direction, *k.sm_partition});
    EXPECT_FALSE(static_skip_reason(k)) << k.name();
  }
  using Runs = std::vector<std::pair<Direction, int>>;
  EXPECT_EQ(runs["put_signal_ce"], (Runs{{Direction::kPush, 0}}));
  EXPECT_EQ(runs["put_signal_ldst"], (Runs{{Direction::kPush, 0}, {Direction::kPush, 8}}));
  EXPECT_EQ(runs["ce"], (Runs{{Direction::kPush, 0}, {Direction::kPull, 0}})) << "a load runs at every direction";
  EXPECT_EQ(runs["nccl"], (Runs{{Direction::kPush, 0}}));
}

// The copy-engine collectives may be the transfer too (no SM on either rank): both ways only,
// unpartitioned, recorded as push; their input and output share the source buffer, which the
// plan doubles as for their own cases.
TEST(InterferenceConfig, CopyEngineCollectivesRunBothWaysUnpartitioned) {
  json doc = doc_with({{"workloads", {"gemm"}}, {"engines", {"all_gather_ce", "all_to_all_ce"}}, {"sm_partitions", {0, 8}}});
  doc["directions"] = {"push", "pull"};
  doc["modes"] = {"uni", "bidir"};
  const Config c = parse_config(doc);
  const std::vector<CaseSpec> cases = expand_cases(c);
  ASSERT_EQ(cases.size(), count_cases(c));
  ASSERT_EQ(cases.size(), 2u) << "one bidir case each";
  for (const CaseSpec& k : cases) {
    EXPECT_EQ(k.mode, Mode::kBidir) << k.name();
    EXPECT_EQ(k.direction, Direction::kPush) << k.name();
    EXPECT_EQ(*k.sm_partition, 0) << k.name();
    EXPECT_FALSE(static_skip_reason(k)) << k.name();
  }
  doc["modes"] = {"uni"};
  doc["interference"]["engines"] = {"ce", "all_gather_ce"};
  try {
    expand_cases(parse_config(doc));
    FAIL() << "a collective engine without bidir planned";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("interference.engines"), std::string::npos) << what;
    EXPECT_NE(what.find("all_gather_ce"), std::string::npos) << what;
    EXPECT_NE(what.find("bidir"), std::string::npos) << what;
  }
}

// With four ranks a collective engine runs over all of them (every ordered pair, every GPU busy
// with the workload), named by its pattern and flows; a pair engine still runs 0 <-> 1; with two
// ranks the collective keeps the pair's name.
TEST(InterferenceConfig, CollectiveEnginesSpanEveryRank) {
  json doc = doc_with({{"workloads", {"gemm"}}, {"engines", {"ce", "all_gather_ce", "nccl_all_to_all"}}, {"sm_partitions", {0}}});
  doc["directions"] = {"push"};
  doc["modes"] = {"bidir"};
  const Config c = parse_config(doc);
  const std::vector<CaseSpec> four = expand_cases(c, GroupLayout::distinct(4));
  ASSERT_EQ(four.size(), count_cases(c));
  ASSERT_EQ(four.size(), 3u);
  EXPECT_EQ(four[0].flows, (std::vector<Flow>{{0, 1}, {1, 0}})) << four[0].name();
  for (const CaseSpec& k : {four[1], four[2]}) {
    EXPECT_EQ(k.flows.size(), 12u) << k.name();
    std::set<std::pair<int, int>> pairs;
    for (const Flow& f : k.flows) {
      EXPECT_NE(f.src_rank, f.dst_rank) << k.name();
      pairs.insert({f.src_rank, f.dst_rank});
    }
    EXPECT_EQ(pairs.size(), 12u) << k.name();
    EXPECT_NE(k.name().find("/all_to_all/"), std::string::npos) << k.name();
    EXPECT_NE(k.name().find("3->2"), std::string::npos) << k.name();
    EXPECT_FALSE(static_skip_reason(transfer_case_of(k))) << k.name();
  }
  const std::vector<CaseSpec> two = expand_cases(c, GroupLayout::distinct(2));
  ASSERT_EQ(two.size(), 3u);
  EXPECT_EQ(two[1].flows, (std::vector<Flow>{{0, 1}, {1, 0}}));
  EXPECT_EQ(two[1].name(), "interference/push/bidir/bytes:1073741824/engine:all_gather_ce/workload:gemm/partition:0");
}

TEST(InterferenceConfig, RefusingAnEngineNamesWhatMayRun) {
  try {
    parse_config(doc_with({{"engines", {"ce", "all_reduce_two_shot"}}}));
    FAIL() << "all_reduce_two_shot accepted as an interference engine";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("interference.engines[1]"), std::string::npos) << what;
    EXPECT_NE(what.find("\"put_signal_ce\""), std::string::npos) << "the engines that may run: " << what;
    EXPECT_NE(what.find("\"ldst\""), std::string::npos) << what;
  }
}

// configs/interference-zero-sm.json: the GEMM beside every zero-SM engine and the SM engines at
// 8 and 16 SMs. Every put_signal_ce case must fit the commands a phase may queue behind the closed
// gate, or it would be skipped on the GPU instead of measured.
TEST(InterferenceConfig, ZeroSmConfigRunsEveryEngineAndFitsTheGate) {
  const Config c = parse_config(
      read_json_file(std::string(test_source_dir()) + "/configs/interference-zero-sm.json", "--config"));
  validate_kernel_axes(c);
  const std::vector<CaseSpec> cases = expand_cases(c);
  std::map<std::string, std::set<int>> partitions;
  std::map<std::string, int> count;
  std::set<std::string> names;
  for (const CaseSpec& k : cases) {
    ASSERT_TRUE(k.engine && k.sm_partition);
    const std::string engine = to_string(*k.engine);
    partitions[engine].insert(*k.sm_partition);
    ++count[engine];
    names.insert(k.name());
    EXPECT_EQ(k.direction, Direction::kPush);
    EXPECT_EQ(*k.workload, "gemm");
    if (engine != "put_signal_ce") continue;
    const auto e = make_engine(transfer_case_of(k));
    ASSERT_TRUE(e);
    EXPECT_FALSE(e->unsupported_reason(0)) << k.name() << ": " << e->unsupported_reason(0).value_or("");
    EXPECT_LE(e->queued_commands(), 256u) << k.name();
    EXPECT_TRUE(e->two_sided()) << "its receiver runs on the other GPU";
  }
  EXPECT_EQ(names.size(), cases.size()) << "every case has its own name";
  const std::set<int> k0816{0, 8, 16};
  for (const char* sm : {"ldst", "tma", "put_signal_ldst", "put_signal_tma"}) EXPECT_EQ(partitions[sm], k0816) << sm;
  EXPECT_EQ(partitions["ce"], std::set<int>{0});
  EXPECT_EQ(partitions["put_signal_ce"], std::set<int>{0});
  EXPECT_EQ(count["put_signal_ce"], 4) << "signal_group 1 and 4, signal as a stream write and as a copy";
}

// configs/interference-collectives-sm.json: the all-gather of the copy engine and of NCCL once
// (unpartitioned), those of puts unpartitioned and in groups of 8 and 16 SMs, each size; over four
// ranks every case's flows are every ordered pair.
TEST(InterferenceConfig, CollectivesSmConfigPutsTheSmAllGathersInGroups) {
  const Config c = parse_config(
      read_json_file(std::string(test_source_dir()) + "/configs/interference-collectives-sm.json", "--config"));
  validate_kernel_axes(c);
  const std::vector<CaseSpec> cases = expand_cases(c, GroupLayout::distinct(4));
  std::map<std::string, std::set<int>> partitions;
  for (const CaseSpec& k : cases) {
    ASSERT_TRUE(k.engine && k.sm_partition);
    partitions[to_string(*k.engine)].insert(*k.sm_partition);
    EXPECT_EQ(k.flows.size(), 12u) << k.name();
    EXPECT_EQ(k.mode, Mode::kBidir) << k.name();
    EXPECT_FALSE(static_skip_reason(transfer_case_of(k))) << k.name();
  }
  EXPECT_EQ(cases.size(), 2u * (1 + 3 + 3 + 1)) << "two sizes";
  const std::set<int> k0816{0, 8, 16};
  EXPECT_EQ(partitions["all_gather_put"], k0816);
  EXPECT_EQ(partitions["all_gather_tma"], k0816);
  EXPECT_EQ(partitions["all_gather_ce"], std::set<int>{0});
  EXPECT_EQ(partitions["nccl_all_gather"], std::set<int>{0});
}

// The transfer streams' priority is part of a case: in its name when highest, in every row (an
// identity field, so compare keeps runs at either priority apart), null in other methods' rows.
TEST(InterferenceRow, TransferPriorityIsPartOfTheCase) {
  json doc = doc_with({{"workloads", {"gemm"}}, {"engines", {"ldst"}}, {"sm_partitions", {0}}});
  const CaseSpec normal = expand_cases(parse_config(doc)).front();
  doc["interference"]["transfer_high_priority"] = true;
  const CaseSpec high = expand_cases(parse_config(doc)).front();
  EXPECT_EQ(normal.name().find("priority"), std::string::npos) << normal.name();
  EXPECT_NE(high.name().find("/transfer_priority:highest"), std::string::npos) << high.name();
  EXPECT_FALSE(transfer_case_of(high).transfer_high_priority) << "the engine's own case has no priority";
  const CaseOutcome o = testing::interference_outcome(0.99, 0);
  EXPECT_EQ(result_row(normal, o)["transfer_priority"], "normal");
  EXPECT_EQ(result_row(high, o)["transfer_priority"], "highest");
  EXPECT_EQ(identity_fields(high, o)["transfer_priority"], "highest");
  const json copy = result_row(testing::spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 20), testing::ok_outcome(390));
  for (const char* field : {"engine", "workload", "sm_partition", "both_gpus_busy", "transfer_priority"}) {
    ASSERT_TRUE(copy.contains(field)) << field << ": an identity field, in every row";
    EXPECT_TRUE(copy[field].is_null()) << field;
    EXPECT_FALSE(identity_fields(high, o)[field].is_null()) << field;
  }
  EXPECT_EQ(identity_fields(high, o)["both_gpus_busy"], false);
}

TEST(InterferenceRow, CarriesBothFiguresSlowdownsAndOverlap) {
  const json row = result_row(testing::interference_spec(Method::kLdst, "gemm", 8), testing::interference_outcome(0.99, 8));
  EXPECT_EQ(row["method"], "interference");
  EXPECT_EQ(row["engine"], "ldst");
  EXPECT_EQ(row["workload"], "gemm");
  EXPECT_EQ(row["sm_partition"], 8);
  EXPECT_EQ(row["transfer_group_sms"], 8);
  EXPECT_EQ(row["workload_group_sms"], 124);
  EXPECT_DOUBLE_EQ(row["workload_alone"]["median"].get<double>(), 702.0);
  EXPECT_DOUBLE_EQ(row["workload_together"]["median"].get<double>(), 602.0);
  EXPECT_NEAR(row["workload_slowdown_pct"].get<double>(), 100.0 * (1 - 602.0 / 702.0), 1e-9);
  EXPECT_NEAR(row["transfer_slowdown_pct"].get<double>(), 100.0 * (1 - row["transfer_together_gbps"]["median"].get<double>() / 332.0),
              1e-9);
  EXPECT_EQ(row["samples_workload_together"].size(), 5u);
  EXPECT_EQ(row["bandwidth_gbps"], row["transfer_together_gbps"]);
  EXPECT_FALSE(row.contains("overlap_note"));
  EXPECT_FALSE(row.contains("directions"));
  // Its tails are over the samples' transfer times, and say so.
  EXPECT_EQ(row["tails_of"], "sample");
  EXPECT_EQ(row["iteration_time_us"]["count"], row["samples_gbps"].size());
  EXPECT_DOUBLE_EQ(row["iteration_time_us"]["max"].get<double>(), row["time_us"]["max"].get<double>());
}

TEST(InterferenceRow, LowOverlapIsSaidAndSkipsKeepTheirVariables) {
  const json low = result_row(testing::interference_spec(Method::kTma, "hbm", 16), testing::interference_outcome(0.90, 16));
  ASSERT_TRUE(low.contains("overlap_note"));
  EXPECT_NE(low["overlap_note"].get<std::string>().find("0.900"), std::string::npos);
  CaseOutcome skipped;
  skipped.status = CaseStatus::kSkipped;
  skipped.error = "green contexts unavailable";
  const json row = result_row(testing::interference_spec(Method::kTma, "hbm", 16), skipped);
  EXPECT_EQ(row["engine"], "tma");
  EXPECT_EQ(row["sm_partition"], 16);
  EXPECT_FALSE(row.contains("workload_alone"));
  EXPECT_TRUE(row["bandwidth_gbps"].is_null());
}

CaseResult trade_case(Method engine, int k, double link_alone, double link_together, double wl_together) {
  CaseOutcome o = testing::interference_outcome(0.99, k);
  o.interference->transfer_alone_gbps.assign(5, link_alone);
  o.interference->transfer_together_gbps.assign(5, link_together);
  o.interference->workload_together.assign(5, wl_together);
  o.gbps.assign(5, link_together);
  return {testing::interference_spec(engine, "gemm", k), o};
}

TEST(TradeTable, PicksThePartitionKeepingTheLinkWithTheMostWorkload) {
  const std::vector<CaseResult> cases = {trade_case(Method::kLdst, 0, 370, 200, 650), trade_case(Method::kLdst, 8, 360, 340, 640),
                                         trade_case(Method::kLdst, 16, 369, 365, 600), trade_case(Method::kLdst, 32, 370, 366, 560),
                                         trade_case(Method::kCe, 0, 390, 380, 665)};
  const std::vector<TradeFinding> f = trade_findings(cases);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].engine, Method::kLdst);
  EXPECT_DOUBLE_EQ(f[0].best_link_alone_gbps, 370.0);
  // 0 SMs kept 200 of 370 (< 90%); 8 kept 340 (>= 333) with 640: the choice.
  ASSERT_TRUE(f[0].keeps_link.has_value());
  EXPECT_EQ(f[0].keeps_link->sm_partition, 8);
  EXPECT_DOUBLE_EQ(f[0].keeps_link->workload_figure, 640.0);
  EXPECT_EQ(f[1].engine, Method::kCe);
  ASSERT_TRUE(f[1].copy_engine_cost_pct.has_value());
  EXPECT_NEAR(*f[1].copy_engine_cost_pct, 100.0 * (1 - 665.0 / 702.0), 1e-9);
  // A curve where nothing keeps the link says so (none).
  const std::vector<TradeFinding> none = trade_findings({trade_case(Method::kTma, 8, 370, 100, 650)});
  EXPECT_FALSE(none[0].keeps_link.has_value());
}

}  // namespace
}  // namespace p2pbench

namespace p2pbench {
namespace {

std::string printed(const std::vector<CaseResult>& cases) {
  std::FILE* f = std::tmpfile();
  print_trade_table(f, cases);
  std::rewind(f);
  std::string text;
  for (int ch; (ch = std::fgetc(f)) != EOF;) text += char(ch);
  std::fclose(f);
  return text;
}

TEST(TradeTable, PrintsGrantedPartitionsLowOverlapAndFindings) {
  CaseOutcome low = testing::interference_outcome(0.90, 8);
  CaseOutcome skipped;
  skipped.status = CaseStatus::kSkipped;
  skipped.error = "green contexts unavailable";
  const std::vector<CaseResult> cases = {
      {testing::interference_spec(Method::kCe, "gemm", 0), testing::interference_outcome(0.99, 0)},
      {testing::interference_spec(Method::kLdst, "gemm", 4), low},
      {testing::interference_spec(Method::kLdst, "gemm", 16), skipped}};
  const std::string text = printed(cases);
  std::fputs(text.c_str(), stdout);
  EXPECT_NE(text.find("Trade table"), std::string::npos);
  EXPECT_NE(text.find("4->8"), std::string::npos) << "a rounded-up group shows what was granted";
  EXPECT_NE(text.find("LOW OVERLAP"), std::string::npos);
  EXPECT_NE(text.find("the copy engine costs the workload"), std::string::npos);
  EXPECT_NE(text.find("TFLOP/s"), std::string::npos);
  EXPECT_NE(text.find("skipped: green contexts unavailable"), std::string::npos) << "a case that did not run says why";
  EXPECT_EQ(printed({}), "") << "no interference rows, no table";
}

}  // namespace
}  // namespace p2pbench
