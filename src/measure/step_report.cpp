#include "measure/step_report.hpp"

#include <nlohmann/json.hpp>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

template <typename T>
void put_optional(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <typename T>
std::optional<T> get_optional(const json& j, const char* key) {
  return j.contains(key) ? std::optional<T>(j[key].get<T>()) : std::nullopt;
}

json lane_to_json(const LaneTiming& l) {
  json flows = json::array();
  for (const Flow& f : l.flows) flows.push_back({f.src_rank, f.dst_rank});
  return {{"flows", flows}, {"elapsed_ms", l.elapsed_ms}, {"window_ns", l.window_ns}, {"two_sided", l.two_sided}, {"still_running", l.still_running}, {"release_ns", l.release_ns}, {"end_ns", l.end_ns}, {"transfer_ms", l.transfer_ms}};
}

LaneTiming lane_from_json(const json& j) {
  LaneTiming l;
  for (const json& f : j.at("flows")) l.flows.push_back({f.at(0).get<int>(), f.at(1).get<int>()});
  l.elapsed_ms = j.at("elapsed_ms");
  l.window_ns = j.at("window_ns");
  l.two_sided = j.at("two_sided");
  l.still_running = j.at("still_running");
  l.release_ns = j.at("release_ns");
  l.end_ns = j.at("end_ns");
  l.transfer_ms = j.at("transfer_ms").get<std::vector<double>>();
  return l;
}

}  // namespace

std::string StepReport::to_bytes() const {
  json j = {{"error", error}, {"fatal", fatal}, {"single_ms", single_ms}, {"iterations", iterations}, {"stop", stop_signal}};
  put_optional(j, "skip", skip);
  put_optional(j, "sms_used", sms_used);
  put_optional(j, "verify_error", verify_error);
  put_optional(j, "engine_mode", engine_mode);
  put_optional(j, "host_numa_node", host_numa_node);
  put_optional(j, "host_pages", host_pages);
  if (!payload.empty()) j["payload"] = payload;
  if (!lanes.empty()) {
    j["lanes"] = json::array();
    for (const LaneTiming& l : lanes) j["lanes"].push_back(lane_to_json(l));
  }
  return j.dump();
}

StepReport StepReport::from_bytes(const std::string& bytes) {
  const json j = json::parse(bytes);
  StepReport r;
  r.error = j.at("error");
  r.fatal = j.at("fatal");
  r.single_ms = j.at("single_ms");
  r.iterations = j.at("iterations");
  r.stop_signal = j.at("stop");
  r.skip = get_optional<std::string>(j, "skip");
  r.sms_used = get_optional<int>(j, "sms_used");
  r.verify_error = get_optional<std::string>(j, "verify_error");
  r.engine_mode = get_optional<std::string>(j, "engine_mode");
  r.host_numa_node = get_optional<int>(j, "host_numa_node");
  r.host_pages = get_optional<std::string>(j, "host_pages");
  r.payload = j.value("payload", std::string());
  if (j.contains("lanes"))
    for (const json& l : j["lanes"]) r.lanes.push_back(lane_from_json(l));
  return r;
}

void run_captured(const std::string& who, const std::function<void()>& local, StepReport& report) {
  try {
    local();
  } catch (const CudaError& e) {
    report.error = who + e.what();
    report.fatal = e.sticky();
  } catch (const RuntimeFailure& e) {
    report.error = who + e.what();
    report.fatal = true;
  } catch (const std::exception& e) {
    report.error = who + e.what();
  }
}

bool any_failed(const std::vector<StepReport>& reports, CaseOutcome& out) {
  for (const StepReport& r : reports) {
    if (r.error.empty()) continue;
    out.status = CaseStatus::kFailed;
    out.error += (out.error.empty() ? "" : "; ") + r.error;
    out.fatal = out.fatal || r.fatal;
  }
  return out.status == CaseStatus::kFailed;
}

bool any_skipped(const std::vector<StepReport>& reports, CaseOutcome& out) {
  for (const StepReport& r : reports) {
    if (!r.skip) continue;
    out.status = CaseStatus::kSkipped;
    out.error = *r.skip;
    return true;
  }
  return false;
}

bool any_verify_failed(const std::vector<StepReport>& reports, CaseOutcome& out) {
  for (const StepReport& r : reports) {
    if (!r.verify_error) continue;
    out.status = CaseStatus::kFailed;
    out.error = *r.verify_error;
    return true;
  }
  return false;
}

}  // namespace p2pbench
