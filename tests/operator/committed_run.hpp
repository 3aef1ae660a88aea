// The committed H200 run (P2PBENCH_H200_DEFAULT_JSON, set by CMake) that the operator tests read.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace p2pbench {

// The run's meta object; throws naming the file where it cannot be read.
inline nlohmann::json committed_meta() {
  std::ifstream in(P2PBENCH_H200_DEFAULT_JSON);
  if (!in) throw std::runtime_error(std::string("cannot read ") + P2PBENCH_H200_DEFAULT_JSON);
  return nlohmann::json::parse(in)["meta"];
}

}  // namespace p2pbench
