#include "judgement/expectations.hpp"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <optional>

#include "common/errors.hpp"
#include "common/text_format.hpp"
#include "config/config.hpp"

namespace p2pbench {

using nlohmann::json;

namespace {

constexpr const char* kFormat = "p2pbench-expectations";

bool is_number(const json& v) { return v.is_number(); }  // bool is not a number in nlohmann

[[noreturn]] void bad(const std::string& path, const std::string& field, const std::string& why) {
  throw InputError("--expect", path, field + ": " + why);
}

// A match value is compared with a row's field: text, a number, true/false or null (absent).
bool is_match_value(const json& v) { return v.is_string() || v.is_number() || v.is_boolean() || v.is_null(); }

std::string entry_problem(const json& e) {
  if (!e.is_object() || !e.contains("match") || !e["match"].is_object()) return "an entry without a 'match' object";
  for (const auto& [key, value] : e["match"].items())
    if (!is_match_value(value)) return "match." + key + ": " + value.dump() + " is not text, a number, a boolean or null";
  for (const auto& [key, value] : e.items())
    if (key != "match" && key != "pair_class" && key != "metric" && key != "reference" && key != "floor" &&
        key != "ceiling" && key != "runs" && key != "worst_run_pct")
      return "unknown key '" + key + "' (match, pair_class, metric, reference, floor, ceiling, runs, worst_run_pct)";
  if (e.contains("runs") && !(e["runs"].is_number_integer() && e["runs"] >= 1)) return "'runs' must be an integer >= 1";
  if (e.contains("worst_run_pct") && !(is_number(e["worst_run_pct"]) && e["worst_run_pct"] >= 0))
    return "'worst_run_pct' must be a number >= 0";
  const ExpectationMetric* m = e.contains("metric") ? expectation_metric(e["metric"]) : nullptr;
  if (m == nullptr)
    return "metric " + (e.contains("metric") ? e["metric"].dump() : std::string("(missing)")) +
           " is not one of bandwidth_gbps, latency_us";
  if (!e.contains(m->limit) || !is_number(e[m->limit]))
    return std::string("a ") + m->name + " entry needs a number '" + m->limit + "'";
  if (e.contains("reference") && !is_number(e["reference"])) return "'reference' must be a number";
  if (!e.contains("pair_class") || !e["pair_class"].is_string()) return "'pair_class' must be a string";
  return "";
}

// The type each optional key must have; checked before the run, as every later read of them
// trusts the type (a wrong one would surface only at the end, after every case ran).
struct KeyRule {
  const char* key;
  bool (*ok)(const json&);
  const char* expected;
};

bool is_text(const json& v) { return v.is_string(); }
bool is_non_negative(const json& v) { return is_number(v) && v >= 0; }
bool is_text_list(const json& v) {
  return v.is_array() && std::all_of(v.begin(), v.end(), [](const json& f) { return f.is_string(); });
}
bool is_object(const json& v) { return v.is_object(); }
bool is_source_list(const json& v) {  // what `expect make` records of each source run; read by people
  return v.is_array() && std::all_of(v.begin(), v.end(), [](const json& s) {
           return s.is_object() && s.contains("path") && s["path"].is_string();
         });
}
bool is_boolean(const json& v) { return v.is_boolean(); }
bool is_count(const json& v) { return v.is_number_integer() && v >= 1; }

constexpr KeyRule kTopLevelKeys[] = {{"system", is_text, "text"},
                                     {"tolerance_pct", is_non_negative, "a number >= 0"},
                                     {"made_from", is_text_list, "a list of file names"},
                                     {"sources", is_source_list, "a list of objects, each with a text 'path'"},
                                     {"allow_warnings", is_boolean, "true or false"},
                                     {"made_with", is_object, "an object"}};
constexpr KeyRule kMadeWithKeys[] = {{"verify", is_boolean, "true or false"},
                                     {"samples", is_count, "an integer >= 1"},
                                     {"min_sample_time_ms", is_non_negative, "a number >= 0"}};

// Checks every key of `object` against `rules` (`also` names keys checked elsewhere), naming
// the key as `prefix` + key.
template <size_t N>
void check_keys(const json& object, const KeyRule (&rules)[N], std::initializer_list<const char*> also,
                const std::string& prefix, const std::string& path) {
  std::string known;
  for (const char* k : also) known += (known.empty() ? "" : ", ") + std::string(k);
  for (const KeyRule& r : rules) known += (known.empty() ? "" : ", ") + std::string(r.key);
  for (const auto& [key, value] : object.items()) {
    if (std::any_of(also.begin(), also.end(), [&](const char* k) { return key == k; })) continue;
    const KeyRule* rule = std::find_if(std::begin(rules), std::end(rules), [&](const KeyRule& r) { return key == r.key; });
    if (rule == std::end(rules)) bad(path, prefix + key, "unknown key (" + known + ")");
    if (!rule->ok(value)) bad(path, prefix + key, value.dump() + " is not " + rule->expected);
  }
}

void check_top_level(const json& doc, const std::string& path) {
  check_keys(doc, kTopLevelKeys, {"format", "version", "expectations"}, "", path);
  if (doc.contains("made_with")) check_keys(doc["made_with"], kMadeWithKeys, {}, "made_with.", path);
}

}  // namespace

void validate_expectations(const json& doc, const std::string& path) {
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat)
    bad(path, "format", std::string("not an expectations file (its \"format\" must be \"") + kFormat + "\")");
  if (!doc.contains("version") || doc["version"] != 1)
    bad(path, "version", (doc.contains("version") ? doc["version"].dump() : std::string("(missing)")) +
                             " is not supported (this p2pbench reads version 1)");
  if (!doc.contains("expectations") || !doc["expectations"].is_array()) bad(path, "expectations", "must be a list");
  check_top_level(doc, path);
  for (size_t i = 0; i < doc["expectations"].size(); ++i) {
    const std::string problem = entry_problem(doc["expectations"][i]);
    if (!problem.empty()) bad(path, "expectations[" + std::to_string(i) + "]", problem);
  }
}

json load_expectations(const std::string& path) {
  json doc;
  try {
    doc = read_json_file(path, "--expect");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError("--expect", path, std::string("not a readable JSON file: ") + e.what());
  }
  validate_expectations(doc, path);
  return doc;
}

void check_run_comparable(const json& expectations, const json& config, const std::string& path) {
  if (!expectations.contains("made_with") || !expectations["made_with"].is_object()) return;
  const json& made = expectations["made_with"];
  if (made.value("verify", true) && config.value("verify", true) == false)
    bad(path, "made_with.verify", "the expectations come from verified runs and this sweep has verification off "
                                  "(--no-verify or \"verify\": false)");
  if (made.contains("samples") && made["samples"].is_number() && config.contains("samples") &&
      config["samples"].get<double>() < made["samples"].get<double>())
    bad(path, "made_with.samples", "the expectations' sources had " + made["samples"].dump() +
                                       " samples per case, this sweep " + config["samples"].dump());
  if (made.contains("min_sample_time_ms") && made["min_sample_time_ms"].is_number() &&
      config.contains("min_sample_time_ms") &&
      config["min_sample_time_ms"].get<double>() < made["min_sample_time_ms"].get<double>())
    bad(path, "made_with.min_sample_time_ms", "the expectations' sources had samples of at least " +
                                                  made["min_sample_time_ms"].dump() + " ms, this sweep " +
                                                  config["min_sample_time_ms"].dump() + " ms");
}


int report_expectations(std::FILE* out, const json& expectations, const std::vector<CaseResult>& cases, const json& meta) {
  if (expectations.is_null()) return kExitOk;
  const json topology = meta.value("topology", json::object());
  const std::string pair_class = topology.is_object() && topology.contains("topo_label") && topology["topo_label"].is_string()
                                     ? topology["topo_label"].get<std::string>()
                                     : "";
  std::fprintf(out, "\nExpected values (--expect: system %s, tolerance %s%%, pair class %s; figure = median of the raw "
               "samples; GB/s with 1 GB = 1e9 B):\n",
               expectations.value("system", std::string("unnamed")).c_str(),
               expectations.contains("tolerance_pct") ? expectations["tolerance_pct"].dump().c_str() : "?",
               pair_class.empty() ? "unknown" : pair_class.c_str());
  if (pair_class.empty()) {
    std::fprintf(out, "  NOT CHECKED: the run does not know which link joins its GPUs (meta.topology.topo_label "
                      "missing: NVML unavailable?)\n");
    return kExitFailure;
  }
  const json verdicts = meta.value("verdicts", json::object());
  if (verdicts.is_object() && (verdicts.value("contention", false) || verdicts.value("throttled", false)))
    std::fprintf(out, "  WARNING: the health verdicts say %s: figures may be low for reasons outside the link\n",
                 verdicts.value("contention", false) ? "another process used the GPUs" : "clocks were throttled");
  std::vector<CheckedCase> checked;
  for (const CaseResult& r : cases) checked.push_back(checked_case(r));
  const ExpectationReport report = check_expectations(expectations, checked, pair_class);
  // An operator reads the failures and the summary; every PASS line with its margin is in
  // `p2pbench-report check`, and a long list of what another config measures is noise here.
  for (const JudgedCase& j : report.judged)
    if (j.result == "FAIL") std::fprintf(out, "  %s\n", j.line.c_str());
  std::fprintf(out, "  %s\n", report.summary.c_str());
  return report.any_fail() ? kExitFailure : kExitOk;
}

}  // namespace p2pbench
