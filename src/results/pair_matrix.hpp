// The all-pairs view of a run: the N x N matrix of every group of matrix cases, how far the
// pairs measured in rounds agree with the same pairs measured alone, and the suspect pairs (the
// first thing an operator reads). Built from the run's typed cases and what joins each pair (the
// run meta's `pairs`, docs/groups.md); the results file gets them as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "results/case_result.hpp"

namespace p2pbench {

// A pair is suspect when it is more than this far (percent) below the median of the comparable
// cells: the same matrix and the same link class.
constexpr double kSuspectMarginPct = 10.0;
// Pairs are judged only on messages of at least this many bytes. A smaller message's time is
// mostly the launch and its completion, the same whatever the link: its figures differ between
// pairs by the host's noise (1 B through NCCL: 0.0 GB/s everywhere, yet "10% below").
constexpr uint64_t kSuspectMinBytes = uint64_t{4} << 20;

// Whether the case is a GB/s figure of the matrix (pattern "matrix" or "sampled"; no latency,
// interference or host-link case): what the matrices are assembled from.
bool is_matrix_case(const CaseSpec& c);

// What one matrix gathers: the cases of one method, direction, mode, size, kernel shape and
// schedule ("sequential", "rounds", "alone_check"; "sampled" for the sampled pattern).
struct MatrixKey {
  std::string method;
  std::string direction;
  std::string mode;
  uint64_t bytes = 0;
  std::string shape;  // the case's kernel-shape fields that are set, "blocks:8/threads:512/unroll:4"; "" for none
  std::string schedule;

  // "ce push uni, 1 GiB, sequential" (the shape in parentheses where there is one; no
  // schedule where it is empty).
  std::string title() const;
  // The same measurement whatever its schedule (what the agreement compares).
  bool same_measurement(const MatrixKey& other) const;
  bool operator<(const MatrixKey& other) const;
  bool operator==(const MatrixKey& other) const;
};

MatrixKey matrix_key_of(const CaseSpec& c);

enum class CellState {
  kMissing,     // not measured (the diagonal, a pair the sample left out, a case not run)
  kMeasured,    // the flow's median
  kSameDevice,  // both ranks on one GPU: never a P2P figure, whatever was measured
  kSkipped,     // the case was skipped (its reason)
  kFailed,      // the case failed (its error)
};
const char* to_string(CellState s);

struct MatrixCell {
  CellState state = CellState::kMissing;
  double median_gbps = 0;  // kMeasured only
  std::string reason;      // kSkipped, kFailed: the case's error
};

// The run's ranks and what joins each ordered pair (meta.group, meta.ranks, meta.pairs; a v1
// meta's `topology` stands for the pair 0 <-> 1).
struct PairLinks {
  int ranks = 0;
  std::map<std::pair<int, int>, std::string> link_class;  // "nvlink NV18", "pcie PXB", "across nodes"
  std::set<std::pair<int, int>> same_device;

  // "unknown" where the meta says nothing of the pair.
  std::string class_of(int src, int dst) const;
  bool is_same_device(int src, int dst) const { return same_device.count({src, dst}) > 0; }
};
// `ranks`: the run's size where the caller knows it (the meta's lists may be filled later).
PairLinks pair_links_from_meta(const nlohmann::json& meta, int ranks = 0);

struct PairMatrix {
  MatrixKey key;
  int ranks = 0;
  std::vector<std::vector<MatrixCell>> cells;  // [src][dst]

  const MatrixCell& at(int src, int dst) const { return cells.at(size_t(src)).at(size_t(dst)); }
  size_t count(CellState s) const;
};

// One matrix per MatrixKey, in the order the cases first name them. A uni case fills its flow's
// cell, a bidir case both cells from its two flows, a round every flow of the round. Ranks that
// share a GPU (the links') give kSameDevice cells.
std::vector<PairMatrix> assemble_matrices(const std::vector<CaseResult>& cases, const PairLinks& links);

struct PairAgreement {
  int src_rank = 0;
  int dst_rank = 0;
  double rounds_gbps = 0;
  double alone_gbps = 0;
  double difference_pct = 0;  // 100 * (rounds - alone) / alone: negative when the rounds are slower
  std::string alone_from;     // "alone_check", or "sequential" where the run measured the whole matrix alone
};

struct RoundsAgreement {
  MatrixKey key;  // the rounds matrix's
  std::vector<PairAgreement> pairs;  // in (src, dst) order
  double max_abs_difference_pct() const;
};

// For every rounds matrix: each pair measured (not same_device) both in the rounds and alone
// (its alone_check case, else the sequential matrix of the same measurement). Rounds matrices
// with no such pair give no entry.
std::vector<RoundsAgreement> rounds_agreement(const std::vector<PairMatrix>& matrices);

struct SuspectPair {
  MatrixKey key;
  int src_rank = 0;
  int dst_rank = 0;
  std::string link_class;
  double gbps = 0;
  double class_median_gbps = 0;  // the median of the comparable cells, this one included
  double reference_gbps = 0;     // the median of the OTHER comparable cells: what it is judged against
  double shortfall_pct = 0;      // 100 * (reference - gbps) / reference
  size_t comparable_cells = 0;   // this one included
};

// Every judged cell with its reference: a measured cell (same_device excluded) of a matrix of
// kSuspectMinBytes or more against the median of the OTHER cells of its matrix and link class
// (two cells at least), so that a bad
// pair does not pull its own reference down; worst shortfall first. Alone checks are a sample
// and not judged. The report tool reads these (`suspects --margin` picks from them) and never
// judges pairs itself.
std::vector<SuspectPair> judge_pairs(const std::vector<PairMatrix>& matrices, const PairLinks& links);

// The one definition of a suspect pair: a judged cell more than margin_pct below its reference.
std::vector<SuspectPair> suspect_pairs(const std::vector<PairMatrix>& matrices, const PairLinks& links,
                                       double margin_pct = kSuspectMarginPct);

// All of the above for one run.
struct MatrixReport {
  PairLinks links;
  std::vector<PairMatrix> matrices;
  std::vector<RoundsAgreement> agreement;
  std::vector<SuspectPair> judged;    // every judged cell, worst first
  std::vector<SuspectPair> suspects;  // those more than margin_pct below their reference
  double margin_pct = kSuspectMarginPct;
};
// `links.ranks` grows to the largest matrix.
MatrixReport build_matrix_report(const std::vector<CaseResult>& cases, PairLinks links,
                                 double margin_pct = kSuspectMarginPct);

nlohmann::json to_json(const MatrixKey& key);
nlohmann::json to_json(const PairMatrix& matrix);
nlohmann::json to_json(const RoundsAgreement& agreement);
nlohmann::json to_json(const SuspectPair& suspect);
// {"matrices": [..], "rounds_agreement": [..],
//  "suspect_pairs": {"margin_pct": 10, "pairs": [..suspects], "judged": [..every judged cell]}}
nlohmann::json to_json(const MatrixReport& report);

}  // namespace p2pbench
