#include "vocab/row_fields.hpp"

namespace p2pbench {

bool same_declaration(const RowField& a, const RowField& b) {
  if (a.name != b.name || a.type != b.type || a.unit != b.unit || a.description != b.description ||
      a.values != b.values || a.nullable != b.nullable || a.identity != b.identity ||
      a.default_value != b.default_value || a.label != b.label || a.members.size() != b.members.size())
    return false;
  for (size_t i = 0; i < a.members.size(); ++i)
    if (!same_declaration(a.members[i], b.members[i])) return false;
  return true;
}

}  // namespace p2pbench
