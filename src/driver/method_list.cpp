#include "driver/method_list.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "results/method_row_fields.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

namespace {

const char* figure_of(const MethodInfo& m) { return m.kind == MethodKind::kLatency ? "latency" : "bandwidth"; }

nlohmann::json or_null(const char* text) { return *text ? nlohmann::json(text) : nlohmann::json(); }

// The fields its rows add (results/method_row_fields.hpp), declared in the file's row_fields.
std::vector<std::string> row_field_names(Method m) {
  std::vector<std::string> names;
  for (const RowField& f : row_fields_of(m)) names.push_back(f.name);
  return names;
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s.empty() ? "-" : s;
}

// The kernel-shape axes as the Python report reads them (scripts/p2pbench_report/methods.py):
// its column names, labels, sizes and the value of rows written before an axis.
nlohmann::json shape_axes_json() {
  nlohmann::json axes = nlohmann::json::array();
  for (ShapeAxis a : kShapeAxes) {
    const ShapeAxisInfo& axis = shape_axis_info(a);
    axes.push_back({{"name", axis.name},
                    {"label", axis.label},
                    {"counts_bytes", axis.counts_bytes},
                    {"value_before_axis", axis.value_before_axis ? nlohmann::json(*axis.value_before_axis) : nlohmann::json()}});
  }
  return axes;
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
                       {"runs_beside_workload", m.runs_beside_workload},
                       {"sanitizer_skip", or_null(m.sanitizer_skip)},
                       {"crosses_nodes", m.crosses_nodes},
                       {"needs_both_ends_running", m.needs_both_ends_running},
                       {"row_fields", row_field_names(m.id)},
                       {"help", m.help}});
  nlohmann::json fields = nlohmann::json::array();
  for (const DeclaredRowField& d : declared_row_fields()) {
    nlohmann::json f = declaration_json(d.field);
    f["methods"] = d.methods;
    fields.push_back(f);
  }
  const nlohmann::json doc = {
      {"generated_by", "p2pbench --list-methods --json"}, {"methods", methods}, {"row_fields", fields},
      {"shape_axes", shape_axes_json()}};
  return doc.dump(2) + "\n";
}

std::string method_list_text() {
  // Columns as wide as their longest entry (method names grow with registered methods).
  size_t name_width = 0, axes_width = 0;
  for (const MethodInfo& m : method_registry()) {
    name_width = std::max(name_width, std::string(m.name).size());
    axes_width = std::max(axes_width, joined(axes_of(m.id)).size());
  }
  auto padded = [](std::string s, size_t width) { return s.append(width > s.size() ? width - s.size() : 0, ' '); };
  std::string out = "methods (config \"methods\", --methods):\n";
  for (const MethodInfo& m : method_registry())
    out += "  " + padded(m.name, name_width) + " " + padded(to_string(m.kind), 19) + " " + padded(figure_of(m), 9) +
           " axes: " + padded(joined(axes_of(m.id)), axes_width) + " " + m.help + "\n";
  return out;
}

}  // namespace p2pbench
