// What Google Benchmark prints and writes as custom context: the two GPUs, the driver, the link
// between them and the settings that shape every figure. Never throws for NVML trouble: a
// missing answer is written with its reason.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "gbench/two_gpu_session.hpp"

namespace p2pbench::gbench {

// Key/value pairs for benchmark::AddCustomContext. The session must be open.
std::vector<std::pair<std::string, std::string>> describe_run(const TwoGpuSession& session, const Config& config);

}  // namespace p2pbench::gbench
