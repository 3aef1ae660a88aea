// The fields a method's rows add to those every row has (vocab/row_fields.hpp): the fields of
// its kind (every host-link method's host buffer, every collective's figures), declared here
// once, then its own, declared with its registration (MethodInfo::row_fields). The writer, the
// method list (and through it the schema and the report) and the expectation matcher read them
// here, and nowhere else names them.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "measure/case_outcome.hpp"
#include "plan/case_spec.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

// The fields of the method's rows: its kind's, then its own.
std::vector<RowField> row_fields_of(Method m);

// A field as declared, and the methods whose rows carry it (in the registry's order).
struct DeclaredRowField {
  RowField field;
  std::vector<std::string> methods;
};

// Every field any method declares, once, in the registry's order of the methods that first
// declare them. Throws std::logic_error where two methods declare one name differently or a
// method declares a field twice.
std::vector<DeclaredRowField> declared_row_fields();

// The declaration as `p2pbench --list-methods --json` lists it: name, type, unit, description
// and, where they say something, values, nullable, identity, default, label and members.
nlohmann::json declaration_json(const RowField& f);

// The identity fields of every method (null where c's method declares no such field), c's
// method's with their values: part of every row's identity_fields.
nlohmann::json identity_row_fields(const CaseSpec& c, const CaseOutcome& o);

// Adds the other fields of c's method to its row (those whose value the case has).
void add_row_fields(const CaseSpec& c, const CaseOutcome& o, nlohmann::json& row);

// The value an expectation takes for the identity field `name` of a row of `method` that lacks
// it or holds null (RowField::default_value), or null.
nlohmann::json identity_default(Method method, const std::string& name);

}  // namespace p2pbench
