// What one member (a rank, or a GPU of the one-process front end) reports from one step of a
// case: a typed structure, serialized in one place (step_report.cpp) where it crosses ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "measure/case_outcome.hpp"

namespace p2pbench {

// One lane's sample: the flows it carried (one, or all a fusing engine launched together), its
// CUDA-event time and its window on the GPU's timer from the gate's release.
struct LaneTiming {
  std::vector<Flow> flows;
  double elapsed_ms = 0;
  double window_ns = 0;
  bool two_sided = false;  // both ends of each flow report; the flow ends when the later one does
  bool still_running = false;  // a background load: still running when its end was asked for
  double release_ns = 0;       // the GPU's timer when the lane saw the gate open, and at its end
  double end_ns = 0;
  std::vector<double> transfer_ms;  // a stamped sample: each transfer's time, in order
};

struct StepReport {
  std::string error;  // empty: the local part succeeded
  bool fatal = false;  // the error left the GPU unusable (a sticky CUDA error, a timeout)
  std::optional<std::string> skip;          // why the case cannot run here
  std::optional<int> sms_used;              // distinct SMs of one launch
  double single_ms = 0;                     // the slowest lane's single transfer
  uint64_t iterations = 0;                  // transfers per sample this member wants
  std::vector<LaneTiming> lanes;            // a sample's timings
  std::optional<std::string> verify_error;  // the first mismatch found
  std::optional<std::string> engine_mode;   // how the engine ran (TransferEngine::engine_mode)
  std::optional<int> host_numa_node;        // the host buffer's node and page size (host-link cases)
  std::optional<std::string> host_pages;
  int stop_signal = 0;                      // a stop signal this member received (0: none)
  std::string payload;  // a step's own typed data, serialized by LockStep::run<Payload> (empty: none)

  std::string to_bytes() const;
  static StepReport from_bytes(const std::string& bytes);
};

// Runs `local`, turning an exception into the report's error (prefixed with `who`): sticky CUDA
// errors and RuntimeFailures (timeouts) are fatal.
void run_captured(const std::string& who, const std::function<void()>& local, StepReport& report);

// Marks `out` failed (fatal where any report was) when any member reported an error.
bool any_failed(const std::vector<StepReport>& reports, CaseOutcome& out);

// Marks `out` skipped with the first member's skip reason; false when no member gave one.
bool any_skipped(const std::vector<StepReport>& reports, CaseOutcome& out);

// Marks `out` failed with the first member's verify_error (a whole message: "verification
// failed ..."); false when every member's data checked out.
bool any_verify_failed(const std::vector<StepReport>& reports, CaseOutcome& out);

}  // namespace p2pbench
