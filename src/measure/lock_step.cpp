#include "measure/lock_step.hpp"

#include "common/cuda_check.hpp"

namespace p2pbench {

using json = nlohmann::json;

std::vector<json> LockStep::run(const char* what, const std::function<void(json&)>& local) const {
  json mine = {{"error", ""}, {"fatal", false}, {"data", json::object()}};
  const std::string rank = "rank " + std::to_string(comm_.rank()) + ": ";
  try {
    local(mine["data"]);
  } catch (const CudaError& e) {
    mine["error"] = rank + e.what();
    mine["fatal"] = e.sticky();
  } catch (const RuntimeFailure& e) {
    mine["error"] = rank + e.what();
    mine["fatal"] = true;
  } catch (const std::exception& e) {
    mine["error"] = rank + e.what();
  }
  std::vector<json> all;
  for (const auto& blob : comm_.allgather(mine.dump(), what)) all.push_back(json::parse(blob));
  return all;
}

bool LockStep::failed(const std::vector<json>& results, CaseOutcome& out) {
  for (const auto& r : results) {
    if (r["error"].get<std::string>().empty()) continue;
    out.status = CaseStatus::kFailed;
    out.error += (out.error.empty() ? "" : "; ") + r["error"].get<std::string>();
    out.fatal = out.fatal || r["fatal"].get<bool>();
  }
  return out.status == CaseStatus::kFailed;
}

}  // namespace p2pbench
