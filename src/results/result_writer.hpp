// The results file: owns the schema (schema/results.schema.json, schema_version 1).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "measure/case_outcome.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

constexpr int kSchemaVersion = 1;

// One row: every independent variable as its own field, then the figures. With the link's
// theoretical peak per direction (GB/s), the row gains pct_of_peak (bidir: of twice the peak).
nlohmann::json result_row(const CaseSpec& c, const CaseOutcome& o, std::optional<double> peak_gbps = std::nullopt);

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
