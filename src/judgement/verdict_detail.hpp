// Shared pieces of verdicts.cpp and verdict_processes.cpp (not an interface of its own).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace p2pbench::verdict_detail {

// One GPU of the run as the verdicts name it: "GPU0 (00000000:00:06.0)", and its rank.
struct GpuRef {
  std::string uuid;
  std::string bus_id;
  std::string label;
  std::optional<int> rank;
};

// obj[key] when obj is an object holding key, else nullptr.
const nlohmann::json* child(const nlohmann::json* obj, const char* key);

// The GPU of meta.gpus with this UUID (else bus id), named for messages.
GpuRef gpu_ref(const nlohmann::json& meta, const nlohmann::json& health_gpu);

nlohmann::json item(const std::string& code, const std::string& severity, const GpuRef* gpu,
                    const std::string& message, nlohmann::json evidence);

// Appends "contention" items (other processes on the run's GPUs) and "health_unavailable" info
// items for processes that cannot be attributed.
void contention_items(const nlohmann::json& meta, nlohmann::json& items);

}  // namespace p2pbench::verdict_detail
