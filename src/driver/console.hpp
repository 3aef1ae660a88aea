// Console output of rank 0: a compact table per group of cases and a progress line.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "plan/case_spec.hpp"
#include "results/case_result.hpp"
#include "results/pair_matrix.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {

// Cases with the same method, direction, mode and kernel shape share one table.
std::string group_key(const CaseSpec& c);

// The case's headline figure with its unit ("371.2 GB/s", "0.897 us"), "" when it has none.
std::string headline_figure(const CaseResult& r);

// Prints one group's cases as a table on `out`: GB/s, or microseconds for the latency methods.
void print_group_table(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases);

// Matrices are printed from this many ranks on: a two-rank matrix is two cells, which today's
// per-size table (one line per pair, with iterations, spread and time) already shows better.
constexpr int kMatrixTablesFromRanks = 3;

// One group's cases (of one group_key), as the operator reads them: pattern cases (one_to_all,
// ring, ...) as a pattern table; matrix cases, in runs of kMatrixTablesFromRanks ranks or more,
// as one N x N matrix per size (alone checks stay per-size tables: a sample); everything else,
// and every matrix case of a two-rank run, as print_group_table.
void print_group_tables(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases,
                        const GroupFacts& facts, const PairLinks& links);

// One matrix as nvbandwidth prints it: rows = source rank, columns = destination rank, GB/s
// with one decimal; "same GPU" where both ranks share a GPU (never a P2P figure), "skip",
// "FAIL", "." (not measured), "-" on the diagonal; then the reasons of skipped and failed cells.
void print_pair_matrix(std::FILE* out, const PairMatrix& matrix);

// Cases of the concurrent patterns: per case the pattern, its flows, the aggregate GB/s (median
// [min..max]), its share of the sum of the flows' peaks, the flows' own medians (min / median /
// max) and the overlap of their windows.
void print_pattern_table(std::FILE* out, const std::string& title, const std::vector<CaseResult>& cases,
                         const GroupFacts& facts);

// End of run: the rounds-vs-alone agreement (worst pairs first) and the suspect pairs (ranked
// by shortfall; "no suspect pairs" when none). For runs of fewer than kMatrixTablesFromRanks
// ranks the suspect section is printed only when there are suspects (two cells say little).
void print_matrix_findings(std::FILE* out, const MatrixReport& report);

class ProgressLine {
 public:
  // Prints only when stderr is a terminal or `forced`.
  ProgressLine(size_t total, bool forced);
  void update(size_t done, const std::string& current, const std::string& last_figure);
  void finish();

 private:
  size_t total_;
  bool enabled_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace p2pbench
