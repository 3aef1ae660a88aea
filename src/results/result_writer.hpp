// The results file: owns the schema (schema/results.schema.json, schema_version 1).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "measure/case_outcome.hpp"
#include "plan/case_spec.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

constexpr int kSchemaVersion = 2;

// What a row needs to know about the group: each rank's GPU and node, and each ordered pair's
// theoretical peak per direction (GB/s; none for same-GPU pairs or where NVML could not say).
struct GroupFacts {
  GroupLayout layout;
  std::vector<std::vector<std::optional<double>>> peak_gbps;  // [src][dst]
  std::string allocator = "legacy";  // how the run's buffers were allocated and mapped (the row's `allocator`)
  std::vector<uint64_t> l2_bytes;     // per rank, its GPU's L2 cache; empty where unknown (the dry run, tests)

  std::optional<double> peak(int src, int dst) const;
  std::optional<uint64_t> l2_of(int rank) const;
  // Two ranks on two GPUs of one node, `peak` both ways (tests, examples).
  static GroupFacts pair(std::optional<double> peak);
  // The layout alone: no peaks, no L2 sizes (tests).
  static GroupFacts of(GroupLayout layout);
};

// The sum of the case's flows' peaks per direction (none where any flow's is unknown): what its
// aggregate's pct_of_peak is measured against.
std::optional<double> aggregate_peak(const CaseSpec& c, const GroupFacts& facts);

// A median's share of its peak, in %; none where the peak is unknown or not positive.
std::optional<double> pct_of_peak(double median_gbps, std::optional<double> peak_gbps);

// One row (schema v2, docs/groups.md): every independent variable as its own field, the
// aggregate figures (v1's fields), then `flows`, `aggregate`, `gpus` and `overlap`.
nlohmann::json result_row(const CaseSpec& c, const CaseOutcome& o, const GroupFacts& facts);

// The case's independent variables as its row names them (method, direction, mode, bytes,
// ranks, pattern, schedule, round, kernel shape and variant, buffer pool; an interference
// case's engine, workload, partition and busy GPUs): what an expectation's "match" compares.
nlohmann::json identity_fields(const CaseSpec& c, const CaseOutcome& o);

// A case's status as its row names it: "ok", "failed", "skipped".
const char* status_name(CaseStatus s);

// A latency figure's statistics: the summary of its samples and their p95.
nlohmann::json latency_stats(const std::vector<double>& samples);
inline nlohmann::json result_row(const CaseSpec& c, const CaseOutcome& o, std::optional<double> peak_gbps = std::nullopt) {
  return result_row(c, o, GroupFacts::pair(peak_gbps));
}

// The whole document. `summary` and `comparison` may be empty.
nlohmann::json result_document(const nlohmann::json& meta, const std::vector<nlohmann::json>& rows,
                               const nlohmann::json& summary, bool incomplete, const std::string& incomplete_reason,
                               const nlohmann::json& comparison = nlohmann::json());

// The document as UTF-8 JSON (invalid bytes in strings replaced by U+FFFD), written with
// write_file_atomically (common/safe_file.hpp): a reader never sees half a file, an existing
// file stays untouched unless the new one is complete. durable = false skips the fsyncs (for
// checkpoints after every case; see write_file_atomically for why that is safe against kills).
void write_json_atomically(const std::string& path, const nlohmann::json& doc, bool durable = true);

// UTC now as "2026-11-22T08:00:00Z".
std::string utc_timestamp();

}  // namespace p2pbench
