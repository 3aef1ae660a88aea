// What rank 0 prints: N x N matrices, pattern tables, the agreement and the suspect pairs, and
// the two-rank tables as before.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "driver/console.hpp"
#include "case_reader.hpp"
#include "example_results.hpp"
#include "matrix_rows.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;
using namespace p2pbench::testing;

std::string printed(const std::function<void(std::FILE*)>& print) {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buf, &size);
  print(out);
  std::fclose(out);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

void expect_contains(const std::string& text, const std::string& expected) {
  EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << text;
}

std::vector<json> four_rank_matrix() {
  std::vector<json> rows;
  const double figures[4][4] = {{0, 1500, 391.2, 390}, {1500, 0, 392, 389}, {393, 300, 0, 1500}, {390, 391, 1500, 0}};
  for (int src = 0; src < 4; ++src)
    for (int dst = 0; dst < 4; ++dst)
      if (src != dst && !(src == 1 && dst == 3)) rows.push_back(row(RowSpec{}, {flow(src, dst, figures[src][dst])}));
  RowSpec skipped;
  skipped.status = "skipped";
  skipped.error = "pairs across nodes have no IPC path";
  rows.push_back(row(skipped, {flow(1, 3, std::nullopt)}));
  return rows;
}

TEST(ConsoleMatrix, RowsAreSourcesColumnsDestinations) {
  const PairLinks links = pair_links_from_meta(group_meta());
  const std::string text = printed([&](std::FILE* out) { print_group_tables(out, "ce/push/uni", cases_from_rows(four_rank_matrix()), four_rank_facts(), links); });
  expect_contains(text, "ce push uni, 1 GiB, sequential   [GB/s, 1 GB = 1e9 B; median over samples; row = source rank, "
                        "column = destination rank]");
  expect_contains(text, " src\\dst         0         1         2         3\n");
  expect_contains(text, "       0         -  same GPU     391.2     390.0\n");
  expect_contains(text, "       1  same GPU         -     392.0      skip\n");
  expect_contains(text, "       2     393.0     300.0         -  same GPU\n");
  expect_contains(text, "same GPU: both ranks on one GPU, no P2P figure; skip: skipped");
  expect_contains(text, "  skip 1->3: pairs across nodes have no IPC path\n");
  EXPECT_EQ(text.find("1500"), std::string::npos) << "a same-GPU figure is never printed as P2P:\n" << text;
  EXPECT_EQ(text.find("src->dst"), std::string::npos) << "no per-size table for matrix rows of four ranks";
}

TEST(ConsoleMatrix, OneMatrixPerSizeAndNotMeasuredCellsMarked) {
  RowSpec small;
  small.bytes = 64 << 10;
  const std::vector<json> rows = {row(RowSpec{}, {flow(0, 2, 391)}), row(small, {flow(0, 2, 90.5)})};
  const std::string text =
      printed([&](std::FILE* out) { print_group_tables(out, "ce/push/uni", cases_from_rows(rows), four_rank_facts(), pair_links_from_meta(group_meta())); });
  expect_contains(text, "ce push uni, 1 GiB, sequential");
  expect_contains(text, "ce push uni, 64 KiB, sequential");
  expect_contains(text, "       0         -         .      90.5         .\n");
  expect_contains(text, ".: not measured");
}

TEST(ConsoleMatrix, TwoRanksKeepThePerSizeTable) {
  CaseSpec uni = spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 30);
  std::vector<CaseResult> cases = {{uni, ok_outcome(390)}};
  uni.flows = {{1, 0}};
  cases.push_back({uni, ok_outcome(380, 10, {1, 0})});
  const std::string text = printed([&](std::FILE* out) {
    print_group_tables(out, "ce/push/uni", cases, GroupFacts::pair(std::nullopt), pair_links_from_meta(example_meta()));
  });
  const std::string before = printed([&](std::FILE* out) { print_group_table(out, "ce/push/uni", cases); });
  EXPECT_EQ(text, before);
  expect_contains(text, "     1 GiB     0->1");
  expect_contains(text, "     1 GiB     1->0");
  EXPECT_EQ(text.find("src\\dst"), std::string::npos);
}

// A row of a put-with-signal method (one with chunk_bytes) says its signals per second: the
// figure over the chunk size.
TEST(ConsoleMatrix, PutSignalRowsSaySignalsPerSecond) {
  CaseSpec c = spec(Method::kLdst, Direction::kPush, Mode::kUni, 1 << 22);  // any method with chunks
  c.chunk_bytes = 4096;
  const std::string text = printed([&](std::FILE* out) { print_group_table(out, "put_signal_ldst", {{c, ok_outcome(40.96, 1)}}); });
  expect_contains(text, "ok; 10.00 M signals/s");
  const std::string bulk = printed([&](std::FILE* out) {
    print_group_table(out, "ce", {{spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 22), ok_outcome(40.96)}});
  });
  EXPECT_EQ(bulk.find("signals/s"), std::string::npos) << bulk;
}

TEST(ConsoleMatrix, GemmRowsSayTflopsBesideTheirGbps) {
  const CaseResult r = gemm_case();
  expect_contains(printed([&](std::FILE* out) { print_group_table(out, "gemm", {r}); }), "ok; 53.7 TFLOP/s");
  expect_contains(headline_figure(r), " GB/s; 53.7 TFLOP/s");
  const std::string bulk = headline_figure({spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 22), ok_outcome(40.96)});
  EXPECT_EQ(bulk.find("TFLOP/s"), std::string::npos) << bulk;
}

TEST(ConsoleMatrix, BidirRowsOfFourRanksNameTheirPairInThePerSizeTable) {
  RowSpec s;
  s.mode = "bidir";
  s.schedule = "alone_check";  // alone checks stay a per-size table
  const std::vector<json> rows = {row(s, {flow(0, 2, 370), flow(2, 0, 371)})};
  const std::string text =
      printed([&](std::FILE* out) { print_group_tables(out, "ce/push/bidir/matrix:alone_check", cases_from_rows(rows), four_rank_facts(), pair_links_from_meta(group_meta())); });
  expect_contains(text, "0<->2");
  expect_contains(text, "370.0 + 371.0");
}

TEST(ConsolePatterns, AggregatePeaksPerFlowAndOverlap) {
  RowSpec s;
  s.pattern = "one_to_all";
  s.schedule.reset();
  std::vector<json> rows = {row(s, {flow(0, 1, 1400), flow(0, 2, 380), flow(0, 3, 390)})};
  s.pattern = "ring";
  rows.push_back(row(s, {flow(0, 2, 300), flow(1, 3, 301), flow(2, 0, 302), flow(3, 1, 303)}));
  s.status = "skipped";
  s.error = "pairs across nodes have no IPC path";
  s.pattern = "bisection";
  rows.push_back(row(s, {flow(0, 2, std::nullopt), flow(1, 3, std::nullopt)}));
  const std::string text =
      printed([&](std::FILE* out) { print_group_tables(out, "ce/push/uni/one_to_all", cases_from_rows(rows), four_rank_facts(), pair_links_from_meta(group_meta())); });
  expect_contains(text, "ce/push/uni/one_to_all   [GB/s, 1 GB = 1e9 B; aggregate = all bytes / union of the flows' windows");
  expect_contains(text, "        size pattern              flows  aggregate            min..max  % peaks                per flow overlap  status\n");
  // A flow within one GPU has no peak: the aggregate's share of the peaks is not known.
  expect_contains(text, "       1 GiB one_to_all root 0        3     2170.0      2170.0..2170.0        -   380.0 / 385.0 / 390.0   0.980  ok; 1 same-GPU flow, not in per flow\n");
  expect_contains(text, "       1 GiB ring shift 2             4     1206.0      1206.0..1206.0    67.0%   300.0 / 301.5 / 303.0   0.980  ok\n");
  expect_contains(text, "       1 GiB bisection                2          -                   -        -                       -       -  skipped: pairs across nodes have no IPC path\n");
}

TEST(ConsoleFindings, AgreementWorstFirstAndSuspectsRanked) {
  std::vector<json> rows = four_rank_matrix();
  RowSpec rounds;
  rounds.schedule = "rounds";
  rounds.round = 0;
  rows.push_back(row(rounds, {flow(0, 2, 385), flow(1, 3, 384)}));
  rounds.round = 1;
  rows.push_back(row(rounds, {flow(2, 1, 381), flow(3, 0, 380)}));
  RowSpec alone;
  alone.schedule = "alone_check";
  rows.push_back(row(alone, {flow(3, 0, 400)}));
  const std::string text = printed([&](std::FILE* out) { print_matrix_findings(out, build_matrix_report(cases_from_rows(rows), pair_links_from_meta(group_meta()))); });
  expect_contains(text, "Rounds vs alone, ce push uni, 1 GiB: 3 pairs, worst +27.0% (2->1)   [GB/s, 1 GB = 1e9 B; difference = (rounds - alone) / alone]");
  expect_contains(text, "    pair     rounds      alone  difference  alone in\n"
                        "    2->1      381.0      300.0      +27.0%  sequential\n"
                        "    3->0      380.0      400.0       -5.0%  alone_check\n"
                        "    0->2      385.0      391.2       -1.6%  sequential\n");
  expect_contains(text,
                  "Suspect pairs (more than 10% below the median of the other pairs of the same link class in the same matrix; "
                  "worst first):\n"
                  "  ce push uni, 1 GiB, sequential: 2->1 300.0 GB/s, 23.3% below the median 391.1 GB/s of the other 6 nvlink "
                  "NV18 pairs\n");
}

TEST(ConsoleFindings, NoSuspectPairsSaidForGroupsSilentForTwoQuietRanks) {
  std::vector<json> rows = four_rank_matrix();
  rows[6]["flows"][0]["samples_gbps"] = {390.0};  // 2->1 back in line
  ASSERT_EQ(rows[6]["src_rank"], 2);
  ASSERT_EQ(rows[6]["dst_rank"], 1);
  const std::string text = printed([&](std::FILE* out) { print_matrix_findings(out, build_matrix_report(cases_from_rows(rows), pair_links_from_meta(group_meta()))); });
  expect_contains(text, "Suspect pairs: no suspect pairs (none more than 10% below the median of its link class)");
  EXPECT_EQ(text.find("Rounds vs alone"), std::string::npos);
  CaseSpec uni = spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 30);
  std::vector<json> two = {result_row(uni, ok_outcome(390))};
  uni.flows = {{1, 0}};
  two.push_back(result_row(uni, ok_outcome(389)));
  EXPECT_EQ(printed([&](std::FILE* out) { print_matrix_findings(out, build_matrix_report(cases_from_rows(two), pair_links_from_meta(example_meta()))); }), "");
}

}  // namespace
}  // namespace p2pbench
