// The results file: owns the schema (schema/results.schema.json, schema_version 1).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "measure/case_outcome.hpp"
#include "sweep/case_spec.hpp"

namespace p2pbench {

constexpr int kSchemaVersion = 1;

// One row: every independent variable as its own field, then the figures. With the link's
// theoretical peak per direction (GB/s), the row gains pct_of_peak (bidir: of twice the peak).
nlohmann::json result_row(const CaseSpec& c, const CaseOutcome& o, std::optional<double> peak_gbps = std::nullopt);

// The whole document. `summary` and `comparison` may be empty.
nlohmann::json result_document(const nlohmann::json& meta, const std::vector<nlohmann::json>& rows,
                               const nlohmann::json& summary, bool incomplete, const std::string& incomplete_reason,
                               const nlohmann::json& comparison = nlohmann::json());

// Writes to a temporary file beside `path`, then renames it over `path`: a reader never sees
// half a file, and an existing file stays untouched until the new one is complete.
void write_json_atomically(const std::string& path, const nlohmann::json& doc);
// The same for text; `durable` also fsyncs (checkpoints skip it: a killed process keeps its
// written pages, only an OS crash would lose them).
void write_text_atomically(const std::string& path, const std::string& text, bool durable);

// UTC now as "2026-11-22T08:00:00Z".
std::string utc_timestamp();

}  // namespace p2pbench
