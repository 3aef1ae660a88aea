// What parse_config says of a config the tests expect it to refuse: the InputError's message, or
// "" where it accepted the config.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "common/errors.hpp"
#include "config/config.hpp"

namespace p2pbench::testing {

inline std::string config_error_of(const nlohmann::json& doc) {
  try {
    parse_config(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace p2pbench::testing
