// The tool's version and the provenance of the build: which sources it came from (commit, dirty,
// hashes), how it was built and when (cmake/provenance.cmake, taken when the binary was built).
// Recorded in every result (meta.tool, meta.provenance) and printed by --version.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace p2pbench {

const char* tool_version();
// The commit's first 12 hex digits, or "unknown" (meta.tool.git_sha, as files before provenance).
std::string tool_git_sha();
// meta.provenance: commit, dirty, diff_sha256, source_sha256, origin, build settings, built_utc.
const nlohmann::json& build_provenance();
// "0.1.0 (git 0123456789ab, dirty)": the version and the commit in one line.
std::string version_line();
// PROGRAM's version_line and a line per fact of the provenance (--version).
std::string version_text(const std::string& program);

}  // namespace p2pbench
