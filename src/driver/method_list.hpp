// `p2pbench --list-methods [--json]`: the method registry for people and for tools. The JSON form
// is committed as schema/methods.json, which the schema's method enums and the Python report
// read; a test keeps the file equal to this output.
#pragma once

#include <string>

namespace p2pbench {

std::string method_list_text();
std::string method_list_json();

}  // namespace p2pbench
