// A switch for tests: P2PBENCH_FAULT="rank=R,case=K,fault=F[,step=S]" makes rank R misbehave at
// the start of case K (0-based), or with step=S (host faults) as it begins the local part of the
// case's S-th lock-step (1-based), inside whichever loop runs that method, or with case=end once the results file is complete (hang there: a GPU
// hung under the teardown, which only the watchdog can end), so the tests can prove that the
// job still ends, says why and keeps what it measured. Faults: stop (SIGSTOP
// itself), exit (_exit(3) without a word), throw (an exception outside any lock-step), cuda (a sticky CUDA error: an illegal address in a kernel), hang (a
// kernel that never ends, as a hung GPU). Unset: no fault. Never set it in production runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace p2pbench {

enum class FaultKind { kStop, kExit, kThrow, kCudaError, kHang };

struct FaultPlan {
  static constexpr uint64_t kAtEnd = UINT64_MAX;  // case=end: after the complete file is written
  int rank = -1;
  uint64_t at_case = 0;
  uint32_t step = 0;  // 0: at the start of the case
  FaultKind kind = FaultKind::kStop;

  // Parses P2PBENCH_FAULT (nullopt when unset); throws InputError naming the variable on a bad value.
  static std::optional<FaultPlan> from_environment();
  static FaultPlan parse(const std::string& text);
  // Refuses a fault that could never fire (InputError naming the variable): a rank or case the
  // run does not have.
  void check_in_range(int ranks, uint64_t cases) const;

  bool due(int rank_now, uint64_t case_index) const { return rank_now == rank && case_index == at_case && step == 0; }
  bool due_at_end(int rank_now) const { return rank_now == rank && at_case == kAtEnd && on_host(); }
  bool hangs_at_end(int rank_now) const { return rank_now == rank && at_case == kAtEnd && kind == FaultKind::kHang; }
  // Faults that happen on the host, outside any lock-step (stop, exit, throw); the GPU faults
  // are raised inside a step by the runner, where a real one would surface.
  bool on_host() const { return kind == FaultKind::kStop || kind == FaultKind::kExit || kind == FaultKind::kThrow; }
  // Raises a host fault now (stop returns when the process is continued).
  void raise_host_fault(const std::string& where) const;
};

// Raises a step=S fault: the session says which case runs, every lock-step asks before its
// local part.
class StepFaults {
 public:
  StepFaults(std::optional<FaultPlan> plan, int rank) : plan_(std::move(plan)), rank_(rank) {}
  void begin_case(uint64_t index) {
    case_ = index;
    steps_ = 0;
  }
  void before_step(const char* what);

 private:
  std::optional<FaultPlan> plan_;
  int rank_;
  uint64_t case_ = FaultPlan::kAtEnd;
  uint32_t steps_ = 0;
};

}  // namespace p2pbench
