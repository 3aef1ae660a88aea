#include "driver/method_list.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "vocab/methods.hpp"

namespace p2pbench {

namespace {

const char* figure_of(const MethodInfo& m) { return m.kind == MethodKind::kLatency ? "latency" : "bandwidth"; }

nlohmann::json or_null(const char* text) { return *text ? nlohmann::json(text) : nlohmann::json(); }

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s.empty() ? "-" : s;
}

}  // namespace

std::string method_list_json() {
  nlohmann::json methods = nlohmann::json::array();
  for (const MethodInfo& m : method_registry())
    methods.push_back({{"name", m.name},
                       {"kind", to_string(m.kind)},
                       {"figure", figure_of(m)},
                       {"axes", axes_of(m.id)},
                       {"title", m.title},
                       {"color", or_null(m.color)},
                       {"report_order", m.report_order},
                       {"runs_as_load", m.runs_as_load},
                       {"sanitizer_skip", or_null(m.sanitizer_skip)},
                       {"crosses_nodes", m.crosses_nodes},
                       {"needs_both_ends_running", m.needs_both_ends_running},
                       {"help", m.help}});
  const nlohmann::json doc = {{"generated_by", "p2pbench --list-methods --json"}, {"methods", methods}};
  return doc.dump(2) + "\n";
}

std::string method_list_text() {
  std::string out = "methods (config \"methods\", --methods):\n";
  char line[512];
  for (const MethodInfo& m : method_registry()) {
    std::snprintf(line, sizeof line, "  %-15s %-19s %-9s axes: %-24s %s\n", m.name, to_string(m.kind), figure_of(m),
                  joined(axes_of(m.id)).c_str(), m.help);
    out += line;
  }
  return out;
}

}  // namespace p2pbench
