// The sweep's answer per method x direction x mode: the best configuration and, where the sweep
// varied the SM count (blocks) at the best's size, the knee (the fewest SMs reaching 90% of it).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "results/case_result.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {

constexpr double kKneeFraction = 0.9;

// Built from the run's cases. Only cases that measured one pair of two GPUs by itself count
// (is_single_pair: a round's or a pattern's aggregate is not a configuration's figure; a
// same-GPU pair's is no P2P figure). A copy within one GPU (copies_within_gpu) whose source and
// destination fit in that GPU's L2 (facts.l2_bytes) measures the L2: its best is taken from the
// cases that do not fit, where any ran, and says whether it fits (`fits_in_l2`).
// The all-pairs part of the results file (matrices, rounds agreement, suspect pairs) is
// to_json(build_matrix_report(..)) of results/pair_matrix.hpp.
nlohmann::json summarize_cases(const std::vector<CaseResult>& cases, const GroupFacts& facts);

// The end-of-run comparison: per direction and size band, the best P2P method (one way, one pair), its
// share of the link's peak, and its speedup over the staged and NCCL baselines at that size.
nlohmann::json compare_methods(const std::vector<CaseResult>& cases, const GroupFacts& facts);
std::vector<std::string> comparison_lines(const nlohmann::json& comparison);

// Console lines for the summary ("ldst push uni: best 371.2 GB/s at ..., knee 8 SMs (336.1 GB/s)").
std::vector<std::string> summary_lines(const nlohmann::json& summary);

// The headings printed above those lines: the knee is explained only where a knee was found
// (the sweep varied the SM count), the speedup only where a baseline (staged, nccl) was
// measured at a size of the table.
std::string summary_heading(const nlohmann::json& summary);
std::string comparison_heading(const nlohmann::json& comparison);

}  // namespace p2pbench
