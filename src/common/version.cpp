#include "common/version.hpp"

namespace p2pbench {

// Defined in the file cmake/provenance.cmake writes into the build folder.
const char* build_provenance_json();

namespace {

std::string text_of(const nlohmann::json& record, const char* key) {
  const auto it = record.find(key);
  return it != record.end() && it->is_string() ? it->get<std::string>() : std::string("unknown");
}

// "yes (changes sha256 ...)", "no", or "unknown" with why.
std::string dirty_text(const nlohmann::json& p) {
  const nlohmann::json& dirty = p["dirty"];
  if (!dirty.is_boolean()) return "unknown (no git and no PROVENANCE.json: see the sources' hash)";
  if (!dirty.get<bool>()) return "no";
  const nlohmann::json& diff = p["diff_sha256"];
  if (p.value("stale_stamp", false)) return "yes (the sources changed after PROVENANCE.json was written)";
  return "yes (changes sha256 " + (diff.is_string() ? diff.get<std::string>() : std::string("unknown")) + ")";
}

}  // namespace

const char* tool_version() { return P2PBENCH_VERSION; }

const nlohmann::json& build_provenance() {
  static const nlohmann::json record = nlohmann::json::parse(build_provenance_json());
  return record;
}

std::string tool_git_sha() {
  const std::string commit = text_of(build_provenance(), "commit");
  return commit == "unknown" ? commit : commit.substr(0, 12);
}

std::string version_line() {
  const nlohmann::json& dirty = build_provenance()["dirty"];
  return std::string(tool_version()) + " (git " + tool_git_sha() +
         (dirty.is_boolean() && dirty.get<bool>() ? ", dirty" : "") + ")";
}

std::string version_text(const std::string& program) {
  const nlohmann::json& p = build_provenance();
  const std::string origin = text_of(p, "origin");
  std::string out = program + " " + version_line() + "\n";
  out += "commit:        " + text_of(p, "commit") +
         (origin == "git" ? " (from git)" : origin == "PROVENANCE.json" ? " (from PROVENANCE.json, stamped " +
                                                                             text_of(p, "stamped_utc") + ")"
                                                                        : " (no git and no PROVENANCE.json)") + "\n";
  out += "dirty:         " + dirty_text(p) + "\n";
  out += "sources:       sha256 " + text_of(p, "source_sha256") + " (src, kernels, tools, schema, cmake, CMakeLists.txt, configs/default.json)\n";
  out += "build type:    " + text_of(p, "build_type") + "\n";
  out += "CUDA archs:    " + text_of(p, "cuda_architectures") + "\n";
  out += "compilers:     " + text_of(p, "cxx_compiler") + "; " + text_of(p, "cuda_compiler") + "\n";
  out += "built:         " + text_of(p, "built_utc") + " (UTC)";
  return out;
}

}  // namespace p2pbench
