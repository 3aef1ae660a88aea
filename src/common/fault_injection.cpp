#include "common/fault_injection.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/errors.hpp"

namespace p2pbench {

namespace {
constexpr const char* kVariable = "P2PBENCH_FAULT";

FaultKind parse_kind(const std::string& v) {
  if (v == "stop") return FaultKind::kStop;
  if (v == "exit") return FaultKind::kExit;
  if (v == "throw") return FaultKind::kThrow;
  if (v == "cuda") return FaultKind::kCudaError;
  if (v == "hang") return FaultKind::kHang;
  throw InputError(kVariable, v, "fault must be stop, exit, throw, cuda or hang");
}
uint32_t parse_step(const std::string& text, const std::string& value) {
  const unsigned long step = std::stoul(value);
  if (step < 1 || step > 1000000 || value.find('-') != std::string::npos)
    throw InputError(kVariable, text, "step must be 1..1000000 (the case's lock-steps, counted from 1)");
  return uint32_t(step);
}
}  // namespace

FaultPlan FaultPlan::parse(const std::string& text) {
  FaultPlan plan;
  bool have_rank = false, have_case = false, have_fault = false;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    try {
      if (key == "rank") plan.rank = std::stoi(value), have_rank = true;
      else if (key == "case") plan.at_case = value == "end" ? kAtEnd : std::stoull(value), have_case = true;
      else if (key == "fault") plan.kind = parse_kind(value), have_fault = true;
      else if (key == "step") plan.step = parse_step(text, value);
      else throw InputError(kVariable, text, "unknown key '" + key + "' (rank, case, fault, step)");
    } catch (const std::logic_error&) {
      throw InputError(kVariable, text, "'" + item + "' is not a number");
    }
  }
  if (!have_rank || !have_case || !have_fault) throw InputError(kVariable, text, "needs rank=R,case=K,fault=F");
  if (plan.step != 0 && (!plan.on_host() || plan.at_case == kAtEnd))
    throw InputError(kVariable, text, "step=S takes a host fault (stop, exit or throw) in a case, not case=end");
  return plan;
}

void FaultPlan::check_in_range(int ranks, uint64_t cases) const {
  const auto refuse = [](const std::string& why) {
    const char* text = std::getenv(kVariable);
    throw InputError(kVariable, text ? text : "", why);
  };
  if (rank < 0 || rank >= ranks)
    refuse("rank " + std::to_string(rank) + " does not exist: the run has " + std::to_string(ranks) + " ranks (0.." +
           std::to_string(ranks - 1) + ")");
  if (at_case == kAtEnd && kind == FaultKind::kCudaError) refuse("case=end takes stop, exit, throw or hang");
  if (at_case != kAtEnd && at_case >= cases)
    refuse("case " + std::to_string(at_case) + " does not exist: the plan has " + std::to_string(cases) + " cases (0.." +
           std::to_string(cases - 1) + ")");
}

std::optional<FaultPlan> FaultPlan::from_environment() {
  const char* v = std::getenv(kVariable);
  if (!v || !*v) return std::nullopt;
  return parse(v);
}

void FaultPlan::raise_host_fault(const std::string& where) const {
  std::fprintf(stderr, "p2pbench: rank %d: injecting a fault (%s) at %s\n", rank, std::getenv(kVariable), where.c_str());
  std::fflush(stderr);
  switch (kind) {
    case FaultKind::kStop: raise(SIGSTOP); return;
    case FaultKind::kExit: _exit(3);
    case FaultKind::kThrow: throw RuntimeFailure("injected fault: an exception outside the lock-step at " + where);
    default: return;
  }
}

void StepFaults::before_step(const char* what) {
  if (!plan_ || plan_->rank != rank_ || plan_->at_case != case_ || plan_->step != ++steps_) return;
  plan_->raise_host_fault("case " + std::to_string(case_) + ", step " + std::to_string(steps_) + " (" + what + ")");
}

}  // namespace p2pbench
