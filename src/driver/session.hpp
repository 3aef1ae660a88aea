// The run of one job: set-up (GPUs, pair, memory, gate, buffers), the sweep, and every way it
// can end. It always ends, says why, and keeps what it measured:
//   complete            -> the file, exit 0 (1 when a case failed)
//   a stop signal       -> the ranks agree at the next step, the file marked incomplete, 128+signal
//   a sticky CUDA error -> every rank stops at once, the file marked incomplete, exit 1, no
//                          teardown that could touch a broken GPU
//   a lost rank         -> the ranks that arrived write the file and end the job (MPI_Abort)
//   anything else       -> the error with what was being done, the file, the job ended
// A watchdog ends the process when a call without a deadline of its own hangs.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "common/fault_injection.hpp"
#include "results/output_guard.hpp"
#include "common/watchdog.hpp"
#include "config/config.hpp"
#include "driver/cli_options.hpp"
#include "judgement/link_health.hpp"
#include "engines/baseline_resources.hpp"
#include "device/clock_sync.hpp"
#include "device/gpu_device.hpp"
#include "measure/interference_cases.hpp"
#include "measure/latency_probes.hpp"
#include "measure/lock_step.hpp"
#include "measure/case_loop.hpp"
#include "measure/rank_group.hpp"
#include "device/peer_buffers.hpp"
#include "device/shared_gate.hpp"
#include "results/result_writer.hpp"
#include "results/case_result.hpp"
#include "results/pair_matrix.hpp"
#include "results/results_file.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

class Session {
 public:
  Session(Communicator& comm, const CliOptions& options, const Config& config, std::vector<std::string> command_line);
  ~Session();
  // Returns the exit status (the same on every rank), or ends the process on a fatal path.
  int run();

 private:
  // Set-up: each returns an exit status, or 0 to go on.
  int setup();
  int lock_output();
  int select_gpu();
  int check_group();
  void assign_domains();  // the NVLink domain of each rank, from the GPUs' fabric registrations
  int plan_cases();
  void check_slow_flow_injection() const;
  int check_memory();
  int open_gate();
  int map_buffers();
  void describe_run();

  // The sweep: throws StopRequested or PeerLost.
  void sweep();
  void run_case(size_t plan_index, size_t run_index, double budget_s, std::optional<int> window);
  // The burn-in (config burn_in): the plan's cases again and again, window by window
  // (session_burn_in.cpp).
  void burn_in();
  void finish_window(int window, double start_s, double end_s, const std::string& start_utc, size_t first_row,
                     nlohmann::json& log, nlohmann::json& health_before);
  void print_finished_group(const std::string& group, size_t first, const PairLinks& links) const;
  CaseOutcome measure(const CaseSpec& c, size_t index, double budget_s = 0.0);
  std::unique_ptr<CaseProcedure> procedure_for(const CaseSpec& c, size_t index);
  CaseOutcome measure_under_load(const CaseSpec& c, size_t index);
  EngineFactory engine_factory();
  std::optional<CaseOutcome> inject_gpu_fault(size_t index);
  void switch_baseline(const CaseSpec& c);
  void close_baseline();

  // Endings.
  int finish(int signal_number = 0);
  nlohmann::json end_meta();
  [[noreturn]] void end_after_peer_lost(const PeerLost& e);
  [[noreturn]] void end_after_error(const std::string& message);
  [[noreturn]] void end_process(int status);
  void on_watchdog(const std::string& message);
  // "<what> after k of N cases"; write_partial() writes the rows so far with that and `detail`.
  std::string after_cases(const std::string& what) const;
  void write_partial(const std::string& what, const std::string& detail);
  int teardown();  // the exit status it adds (a peer stopped at the end)
  void hang_the_gpu_in_teardown();
  int agree_on_status(int status);

  Communicator& comm_;
  const CliOptions& options_;
  Config config_;
  std::vector<CaseSpec> cases_;
  std::vector<CaseResult> finished_;  // every measured case, typed: what the end-of-run analyses read
  std::vector<std::string> command_line_;
  const int me_;
  const bool sanitizer_mode_;
  std::optional<FaultPlan> fault_;
  StepFaults step_faults_;  // the same plan's step=S faults, raised inside the lock-steps
  std::unique_ptr<ResultsFile> results_;
  std::optional<OutputLock> output_lock_;  // the writing rank's hold on --output for the run
  Watchdog watchdog_;

  int device_ = -1;
  GpuInfo gpu_;
  nlohmann::json cpu_binding_;
  std::vector<nlohmann::json> gpus_;  // every rank's GPU description
  bool same_device_ = false;  // some ranks share a GPU
  GroupFacts facts_;          // rank -> GPU and node, each pair's peak
  nlohmann::json p2p_;
  nlohmann::json nvlink_domains_;  // meta.group.nvlink_domains: each rank's domain and how it was decided
  std::optional<std::string> no_peer_;
  uint64_t capacity_ = 0;
  int destination_slots_ = 1;
  std::optional<SharedGate> gate_;
  std::optional<PeerBuffers> buffers_;
  ClockOffset clock_start_;
  uint64_t sweep_start_ns_ = 0;
  std::optional<LinkHealth> link_;
  nlohmann::json pairs_;  // meta.pairs: every ordered pair of ranks
  std::vector<nlohmann::json> ranks_;
  nlohmann::json meta_;

  std::unique_ptr<BaselineResources> baselines_;
  std::optional<Method> open_baseline_;
  RunnerOptions runner_options_;  // set when the sweep starts (the config is final by then)
  std::unique_ptr<RankGroup> group_;
  std::unique_ptr<LatencyProbes> latency_;
  std::unique_ptr<InterferenceCases> interference_;
  bool any_failed_ = false;
  std::string incomplete_reason_;
  bool fatal_ = false;
  bool stopping_ = false;  // a stop signal was agreed
};

}  // namespace p2pbench
