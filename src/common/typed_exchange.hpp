// Typed values between ranks: a struct that nlohmann's to_json/from_json know
// (NLOHMANN_DEFINE_TYPE_*_WITH_DEFAULT beside it), or a JSON document bound for the results
// file, gathered from every rank or sent from one. The bytes on the wire are the value's JSON;
// no caller handles them.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "common/peer_group.hpp"

namespace p2pbench {

// The bytes a value travels as, and back.
template <typename T>
std::string encode_value(const T& value) {
  return nlohmann::json(value).dump();
}
template <typename T>
T decode_value(const std::string& bytes) {
  return nlohmann::json::parse(bytes).template get<T>();
}

// Every rank's value, indexed by rank (PeerGroup::exchange's deadline and errors).
template <typename T>
std::vector<T> gather_values(const PeerGroup& group, const T& mine, const char* what,
                             std::optional<double> timeout_s = std::nullopt) {
  std::vector<T> all;
  for (const std::string& bytes : group.exchange(encode_value(mine), what, timeout_s)) all.push_back(decode_value<T>(bytes));
  return all;
}

// Root's value on every rank.
template <typename T>
T broadcast_value(const PeerGroup& group, const T& value, int root, const char* what,
                  std::optional<double> timeout_s = std::nullopt) {
  std::string bytes = group.rank() == root ? encode_value(value) : std::string();
  group.broadcast(bytes, root, what, timeout_s);
  return decode_value<T>(bytes);
}

}  // namespace p2pbench
