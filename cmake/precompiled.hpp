// The headers precompiled for every C++ target (cmake/PrecompiledHeaders.cmake): nlohmann/json,
// the slowest the project reads, and the standard headers most files include. Files still
// include what they use; this only makes reading these once per build instead of once per file.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>
