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

std::string format_size(uint64_t bytes) {
  // The largest binary unit that divides the size exactly: 4096 -> "4 KiB", 1.5 MiB ->
  // "1536 KiB", 4097 -> "4097 B". Never rounded, so two different sizes never print alike.
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes != 0 && bytes % 1024 == 0 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + units[u];
}

}  // namespace p2pbench
