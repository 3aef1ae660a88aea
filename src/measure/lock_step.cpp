#include "measure/lock_step.hpp"

#include "common/cuda_check.hpp"
#include "common/stop_signal.hpp"

namespace p2pbench {

using json = nlohmann::json;

StopRequested::StopRequested(int signal_number, int rank)
    : std::runtime_error("interrupted by " + signal_name(signal_number) + " (received by rank " + std::to_string(rank) + ")"),
      signal_(signal_number),
      rank_(rank) {}

std::vector<json> LockStep::run(const char* what, const std::function<void(json&)>& local, double local_work_s) const {
  json mine = {{"error", ""}, {"fatal", false}, {"data", json::object()}};
  const std::string rank = "rank " + std::to_string(comm_.rank()) + ": ";
  const double scale = comm_.timeouts().scale;
  try {
    // The local part's own waits have deadlines; the watchdog catches a call that blocks
    // without one (a CUDA call stuck behind a hung kernel).
    Watchdog::Scope guard(watchdog_, (local_work_s + 2 * kSlackS) * scale, rank + std::string(what));
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
  mine["stop"] = stop_signal_received();
  std::vector<json> all;
  for (const auto& blob : comm_.exchange(mine.dump(), what, local_work_s + kSlackS)) all.push_back(json::parse(blob));
  for (size_t r = 0; r < all.size(); ++r)
    if (const int signal = all[r].value("stop", 0)) throw StopRequested(signal, int(r));
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
