#include "common/text_format.hpp"

#include <cstdarg>
#include <cstdio>

namespace p2pbench {

std::string text_format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

}  // namespace p2pbench
