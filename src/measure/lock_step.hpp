// One collective step of a case: every rank runs its local part (errors caught), then every
// rank learns every rank's result, so the ranks stay in lock-step even when one of them fails.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <vector>

#include "comm/communicator.hpp"
#include "measure/case_outcome.hpp"

namespace p2pbench {

class LockStep {
 public:
  explicit LockStep(const Communicator& comm) : comm_(comm) {}

  // Entries indexed by rank: {"error": "...", "fatal": bool, "data": {...}}. A CUDA error that
  // leaves the context unusable, and any RuntimeFailure (timeouts), is fatal.
  std::vector<nlohmann::json> run(const char* what, const std::function<void(nlohmann::json&)>& local) const;

  // Marks `out` failed (and fatal where one was) if any rank reported an error.
  static bool failed(const std::vector<nlohmann::json>& results, CaseOutcome& out);

 private:
  const Communicator& comm_;
};

}  // namespace p2pbench
