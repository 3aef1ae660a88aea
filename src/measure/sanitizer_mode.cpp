#include "measure/sanitizer_mode.hpp"

#include <cstdlib>
#include <cstring>

namespace p2pbench {

bool sanitizer_mode_wanted(bool requested) {
  if (requested) return true;
  // compute-sanitizer starts the program with its injection variables set (seen with the CUDA
  // 13.0 tools: NV_SANITIZER_INJECTION_PORT_BASE and friends).
  if (std::getenv("NV_SANITIZER_INJECTION_PORT_BASE")) return true;
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  return injection && std::strstr(injection, "sanitizer") != nullptr;
}

std::optional<std::string> sanitizer_skip_reason(Method m) {
  const std::string why = method_info(m).sanitizer_skip;
  if (why.empty()) return std::nullopt;
  return "not run in sanitizer mode: " + why + " (its kernel tests run under compute-sanitizer instead)";
}

double effective_timeout_scale(bool sanitizer_mode, bool scale_given, double scale) {
  if (scale_given) return scale;
  return sanitizer_mode ? 100.0 : 1.0;
}

}  // namespace p2pbench
