// printf into a std::string, for messages and console lines built from numbers and units.
#pragma once

#include <string>

namespace p2pbench {

// At most 511 characters (longer text is cut): one message or console line.
std::string text_format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace p2pbench
