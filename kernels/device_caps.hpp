// Capability checks shared by the kernels' unsupported_reason functions.
#pragma once

#include <optional>
#include <string>

namespace p2pbench::kernels {

// "<what> need compute capability 9.0+ (this GPU is 8.0)" where `device` is older than Hopper.
std::optional<std::string> requires_hopper(int device, const std::string& what);

}  // namespace p2pbench::kernels
