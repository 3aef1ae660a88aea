#include "results/method_row_fields.hpp"

#include <stdexcept>

#include "results/collective_fields.hpp"
#include "results/host_link_fields.hpp"
#include "results/interference_rows.hpp"

namespace p2pbench {

using json = nlohmann::json;

namespace {

// What every method of a kind writes, declared once for the kind.
std::vector<RowField> kind_row_fields(MethodKind k) {
  switch (k) {
    case MethodKind::kHostLink: return host_link_fields();
    case MethodKind::kCollective: return {collective_field()};
    case MethodKind::kInterference: return interference_fields();
    default: return {};
  }
}

const char* to_string(RowFieldType t) {
  switch (t) {
    case RowFieldType::kText: return "text";
    case RowFieldType::kFlag: return "flag";
    case RowFieldType::kCount: return "count";
    case RowFieldType::kNumber: return "number";
    case RowFieldType::kStats: return "stats";
    case RowFieldType::kNumbers: return "numbers";
    case RowFieldType::kObject: return "object";
  }
  return "?";
}

// The method's declared field of that name, or null.
const RowField* field_named(const std::vector<RowField>& fields, const std::string& name) {
  for (const RowField& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

std::vector<RowField> row_fields_of(Method m) {
  const MethodInfo& info = method_info(m);
  std::vector<RowField> fields = kind_row_fields(info.kind);
  fields.insert(fields.end(), info.row_fields.begin(), info.row_fields.end());
  return fields;
}

std::vector<DeclaredRowField> declared_row_fields() {
  std::vector<DeclaredRowField> out;
  for (const MethodInfo& m : method_registry()) {
    const std::vector<RowField> fields = row_fields_of(m.id);
    for (const RowField& f : fields) {
      if (field_named(fields, f.name) != &f)
        throw std::logic_error(std::string("method ") + m.name + " declares the row field " + f.name + " twice");
      DeclaredRowField* known = nullptr;
      for (DeclaredRowField& d : out)
        if (d.field.name == f.name) known = &d;
      if (!known) {
        out.push_back({f, {m.name}});
      } else if (!same_declaration(known->field, f)) {
        throw std::logic_error("the row field " + f.name + " of method " + m.name + " is declared otherwise by " +
                               known->methods.front());
      } else {
        known->methods.push_back(m.name);
      }
    }
  }
  return out;
}

json declaration_json(const RowField& f) {
  json j = {{"name", f.name}, {"type", to_string(f.type)}, {"unit", f.unit.empty() ? json() : json(f.unit)},
            {"description", f.description}};
  if (!f.values.empty()) j["values"] = f.values;
  if (f.nullable) j["nullable"] = true;
  if (f.identity) j["identity"] = true;
  if (!f.default_value.empty()) j["default"] = f.default_value;
  if (!f.label.empty()) j["label"] = f.label;
  if (!f.members.empty()) {
    j["members"] = json::array();
    for (const RowField& member : f.members) j["members"].push_back(declaration_json(member));
  }
  return j;
}

json identity_row_fields(const CaseSpec& c, const CaseOutcome& o) {
  json out = json::object();
  const std::vector<RowField> own = row_fields_of(c.method);
  for (const DeclaredRowField& d : declared_row_fields()) {
    if (!d.field.identity) continue;
    const RowField* mine = field_named(own, d.field.name);
    json value = mine ? mine->value(c, o) : json();
    out[d.field.name] = value.is_discarded() ? json() : std::move(value);
  }
  return out;
}

void add_row_fields(const CaseSpec& c, const CaseOutcome& o, json& row) {
  for (const RowField& f : row_fields_of(c.method)) {
    if (f.identity) continue;  // identity_row_fields wrote it
    json value = f.value(c, o);
    if (!value.is_discarded()) row[f.name] = std::move(value);
  }
}

json identity_default(Method method, const std::string& name) {
  const std::vector<RowField> fields = row_fields_of(method);
  const RowField* f = field_named(fields, name);
  return f && f->identity && !f->default_value.empty() ? json(f->default_value) : json();
}

}  // namespace p2pbench
