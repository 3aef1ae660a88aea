// An optional value as a row's field: the value, or null where there is none. (nlohmann/json
// 3.11, Debian's, has no serializer for std::optional.)
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

namespace p2pbench {

template <class T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace p2pbench
