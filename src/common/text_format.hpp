// printf into a std::string, for messages and console lines built from numbers and units.
#pragma once

#include <cstdint>
#include <string>

namespace p2pbench {

// At most 511 characters (longer text is cut): one message or console line.
std::string text_format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Exact text for console output: the largest binary unit that divides the size ("4 KiB",
// "1536 KiB"), else bytes ("4097 B").
std::string format_size(uint64_t bytes);

}  // namespace p2pbench
