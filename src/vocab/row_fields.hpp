// A field a method adds to its result rows, declared with the method's registration
// (MethodInfo::row_fields) or, for what every method of a kind writes, with the kind
// (results/method_row_fields.cpp). From the declaration the writer writes the field,
// `p2pbench --list-methods --json` lists it (schema/methods.json), and from that list
// scripts/update-method-lists.py writes its property into the results schema, the report takes
// its identity and statistics columns and the expectation matcher its default. The ground floor:
// the value's types are only named here.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace p2pbench {

struct CaseSpec;
struct CaseOutcome;

// What a field holds, which decides its schema (scripts/update-method-lists.py).
enum class RowFieldType {
  kText,     // a string, one of `values` where they are given
  kFlag,     // true or false
  kCount,    // an integer >= 0
  kNumber,   // a number >= 0
  kStats,    // the statistics of a list of samples (min, median, mean, max, stdev)
  kNumbers,  // a list of numbers (raw samples)
  kObject,   // an object of `members`, each one always present
};

// The field's value in a case's row: a json value, or a discarded one (json::value_t::discarded)
// where the row has no such field.
using RowFieldValue = nlohmann::json (*)(const CaseSpec& c, const CaseOutcome& o);

struct RowField {
  std::string name;
  RowFieldType type = RowFieldType::kText;
  std::string unit = {};         // of its numbers ("TFLOP/s", "GB/s"); "" where they have none
  std::string description = {};  // what it is, for the schema and the method list
  std::vector<std::string> values = {};  // kText: the only values it takes (empty: any text)
  bool nullable = false;                 // null is one of its values
  // A variable of the case rather than a figure (host_memory): every row carries it, null where
  // its method declares no such field, and cases of several files and expectations are matched
  // on it.
  bool identity = false;
  // An identity field's value in the files written before the field existed (host_memory:
  // pinned): the report and the expectation matcher take a row without it, or with null, as
  // this value. "" : none.
  std::string default_value = {};
  // An identity field's value as the report names it in a case ("{} host memory"); "" : the value.
  std::string label = {};
  std::vector<RowField> members = {};  // kObject: its fields (their `value` unused)
  RowFieldValue value = nullptr;       // null for members
};

// Whether two declarations of a field say the same (name, type, unit, description, values, ...),
// as two methods that declare one field must.
bool same_declaration(const RowField& a, const RowField& b);

}  // namespace p2pbench
