#include "driver/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/stop_signal.hpp"
#include "common/typed_exchange.hpp"
#include "driver/console.hpp"
#include "judgement/expectations.hpp"
#include "judgement/verdicts.hpp"
#include "driver/run_meta.hpp"
#include "judgement/trade_table.hpp"
#include "kernels/fault_kernels.hpp"
#include "measure/sanitizer_mode.hpp"
#include "measure/case_loop.hpp"
#include "measure/transfer_timer.hpp"
#include "results/result_writer.hpp"
#include "results/pair_matrix.hpp"
#include "results/summary.hpp"
#include "plan/load_length.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

// Bounds of the calls that cannot be given a deadline of their own (seconds, before scaling).
constexpr double kBaselineSetupS = 120.0;  // NCCL's communicator set-up and teardown
constexpr double kTeardownS = 60.0;        // freeing buffers (the peers unmap them first)
constexpr double kFinalizeS = 20.0;        // NCCL's teardown and MPI_Finalize: under a second when well
constexpr double kLastRankWaitS = 15.0;    // the writer waits this long for the other local ranks to exit
constexpr double kGpuFaultWaitS = 5.0;     // how long the injected hang is waited for
constexpr double kStopGraceS = 20.0;       // after a stop signal, the run ends within this (watchdog)

CaseOutcome skipped(const std::string& why) {
  CaseOutcome out;
  out.status = CaseStatus::kSkipped;
  out.error = why;
  return out;
}

}  // namespace

Session::Session(Communicator& comm, const CliOptions& options, const Config& config, std::vector<std::string> command_line)
    : comm_(comm),
      options_(options),
      config_(config),
      cases_(),  // planned once the group is known (plan_cases)
      command_line_(std::move(command_line)),
      me_(comm.rank()),
      sanitizer_mode_(sanitizer_mode_wanted(options.sanitize)),
      fault_(options.fault),
      step_faults_(options.fault, comm.rank()),
      results_(std::make_unique<ResultsFile>(options.output_path, cases_.size(), comm.rank() == 0)),
      watchdog_([this](const std::string& message) { on_watchdog(message); }, kStopGraceS * comm.timeouts().scale) {
  if (sanitizer_mode_) {
    // One small sample per case: the figures are not measurements anyway.
    config_.samples = 1;
    config_.min_sample_time_ms = 0;
    config_.warmup_time_ms = 0;
  }
}

Session::~Session() = default;

int Session::run() {
  try {
    if (int rc = setup()) return agree_on_status(rc);
    if (me_ == 0 && sanitizer_mode_)
      std::printf("SANITIZER MODE: one ungated sample per case; the figures below are NOT measurements\n");
    sweep();
    return finish();
  } catch (const StopRequested& e) {
    incomplete_reason_ = after_cases(e.what());
    stopping_ = true;  // a scheduler's SIGKILL may follow soon: no optional work at the end
    return finish(e.signal_number());
  } catch (const PeerLost& e) {
    end_after_peer_lost(e);
  } catch (const std::exception& e) {
    end_after_error(e.what());
  } catch (...) {
    end_after_error("an exception of an unknown type");
  }
}

void Session::sweep() {
  runner_options_ = RunnerOptions::from(config_, comm_.timeouts().scale, &watchdog_, sanitizer_mode_);
  runner_options_.faults = &step_faults_;
  baselines_ = make_baseline_resources(capacity_, device_, comm_.timeouts().scale);
  group_ = std::make_unique<RankGroup>(comm_, runner_options_, facts_.layout, device_, *gate_, *buffers_);
  latency_ = std::make_unique<LatencyProbes>(comm_, runner_options_, *gate_, *buffers_, gpu_.max_sm_clock_mhz);
  interference_ = std::make_unique<InterferenceCases>(comm_, runner_options_, config_.interference, device_, *gate_, *group_,
                                                      engine_factory());
  if (config_.burn_in.enabled()) return burn_in();
  ProgressLine progress(cases_.size(), options_.progress);
  const PairLinks links = pair_links_from_meta(meta_, comm_.size());
  size_t group_first = 0;  // the group's first case in finished_
  std::string group;
  for (size_t i = 0; i < cases_.size() && !fatal_; ++i) {
    const CaseSpec& c = cases_[i];
    if (me_ == 0 && group_key(c) != group) {
      print_finished_group(group, group_first, links);
      group_first = finished_.size();
      group = group_key(c);
    }
    run_case(i, i, 0.0, std::nullopt);
    if (me_ == 0) progress.update(i + 1, c.name(), headline_figure(finished_.back()));
  }
  if (me_ == 0) {
    progress.finish();
    print_finished_group(group, group_first, links);
  }
}

// Case `plan_index` of the plan as the run's case `run_index` (a burn-in runs each case once
// per window): measured, its row added (the file checkpointed), a fatal error noted.
void Session::run_case(size_t plan_index, size_t run_index, double budget_s, std::optional<int> window) {
  const CaseSpec& c = cases_[plan_index];
  if (fault_ && fault_->due(me_, run_index) && fault_->on_host())
    fault_->raise_host_fault("case " + std::to_string(run_index) + " (" + c.name() + ")");
  step_faults_.begin_case(run_index);
  switch_baseline(c);
  finished_.push_back({c, measure(c, run_index, budget_s)});
  const CaseOutcome& outcome = finished_.back().outcome;
  any_failed_ = any_failed_ || outcome.status == CaseStatus::kFailed;
  json row = result_row(c, outcome, facts_);
  if (window) row["window"] = *window;
  results_->add_row(row);
  if (outcome.fatal) {
    fatal_ = true;
    incomplete_reason_ = "stopped after a fatal error in " + c.name() + ": " + outcome.error;
  }
}

// A finished group's tables, from its cases: finished_[first..].
void Session::print_finished_group(const std::string& group, size_t first, const PairLinks& links) const {
  if (first >= finished_.size()) return;
  const std::vector<CaseResult> cases(finished_.begin() + std::ptrdiff_t(first), finished_.end());
  if (is_interference(cases.front().spec.method)) return print_interference_table(stdout, group, cases);
  print_group_tables(stdout, group, cases, facts_, links);
}

CaseOutcome Session::measure(const CaseSpec& c, size_t index, double budget_s) {
  if (sanitizer_mode_)
    if (auto why = sanitizer_skip_reason(c.method)) return skipped(*why);
  if (auto out = inject_gpu_fault(index)) return *out;
  if (auto why = group_skip_reason(c, facts_.layout)) return skipped(*why);
  if (is_latency(c.method) && c.load) return measure_under_load(c, index);
  return run_procedure(*procedure_for(c, index), runner_options_.samples, runner_options_.verify, budget_s);
}

// The case's steps for the one case loop: its method family's.
std::unique_ptr<CaseProcedure> Session::procedure_for(const CaseSpec& c, size_t index) {
  if (is_interference(c.method)) return interference_->procedure_for(c, index);
  if (is_latency(c.method)) return latency_->procedure_for(c, index);
  return copy_procedure(*group_, runner_options_, c, index, engine_factory());
}

EngineFactory Session::engine_factory() {
  return [this](const CaseSpec& k) {
    std::unique_ptr<TransferEngine> engine = make_engine(k);
    if (!engine && baselines_) engine = baselines_->make_engine(k);
    return engine;
  };
}

// Latency under load: the load's flows start (ungated, sized to outlast the latency case by
// a wide margin), the latency case runs beside them, then the load is waited for, checked for
// having covered the latency case, and verified.
CaseOutcome Session::measure_under_load(const CaseSpec& c, size_t index) {
  if (c.load->flows.empty())
    return skipped("latency under load needs at least two ranks besides the pair (" + std::to_string(comm_.size()) +
                   " ranks in the run)");
  CaseLoop load(*group_, runner_options_, c.load_case(), index, engine_factory());
  CaseOutcome l;
  if (!load.agree_on_skips(l) || !load.prepare(l) || !load.start_background(load_seconds(config_, c), l)) {
    CaseOutcome out = l;
    out.error = "the load beside the latency: " + l.error;
    if (out.status == CaseStatus::kOk) out.status = CaseStatus::kFailed;
    return out;
  }
  CaseOutcome out = run_procedure(*latency_->procedure_for(c, index), runner_options_.samples, runner_options_.verify);
  LoadOutcome figures;
  if (!load.finish_background(l, figures.covered) || !load.verify(0, l)) {
    out.status = CaseStatus::kFailed;
    out.fatal = out.fatal || l.fatal;
    out.error += (out.error.empty() ? "" : "; ") + std::string("the load beside the latency: ") + l.error;
  }
  figures.flows = l.flows;
  figures.gbps = l.gbps;
  figures.verified = config_.verify && l.status == CaseStatus::kOk;
  figures.error = l.error;
  out.load = figures;
  return out;
}

// The GPU faults of the test switch surface inside a step, as a real one would.
std::optional<CaseOutcome> Session::inject_gpu_fault(size_t index) {
  if (!fault_ || fault_->on_host() || fault_->at_case != index) return std::nullopt;
  const auto results = LockStep(comm_, &watchdog_).run_reports("running a case (fault injection)", [&](StepReport&) {
    if (fault_->rank != me_) return;
    std::fprintf(stderr, "p2pbench: rank %d: injecting a GPU fault at case %zu\n", me_, index);
    Stream stream = make_stream("fault injection");
    Event done = make_event("the end of the injected fault");
    if (fault_->kind == FaultKind::kCudaError) kernels::enqueue_illegal_address(stream.get());
    else kernels::enqueue_hang(600.0, stream.get());
    cuda_check(cudaEventRecord(done.get(), stream.get()), "recording the fault's event");
    wait_for_event(done.get(), kGpuFaultWaitS * comm_.timeouts().scale, "the injected fault kernel");
  });
  CaseOutcome out;
  if (!any_failed(results, out)) return std::nullopt;
  return out;
}

// Baseline methods hold session resources (NCCL communicator, staging area) only while their
// cases run (an interference case's: its engine's). NCCL's own steps have deadlines
// (nccl_engine.hpp); the watchdog guards the whole set-up and teardown beside them.
void Session::switch_baseline(const CaseSpec& c) {
  const Method m = c.transfer_method();
  if (open_baseline_ && *open_baseline_ != m) close_baseline();
  if (needs_session_resource(m) && !open_baseline_ && !(sanitizer_mode_ && sanitizer_skip_reason(m))) {
    Watchdog::Scope guard(&watchdog_, kBaselineSetupS * comm_.timeouts().scale,
                          "setting up the " + std::string(to_string(m)) + " baseline");
    baselines_->begin(m, comm_);  // an unavailable method's engines report why
    open_baseline_ = m;
  }
}

void Session::close_baseline() {
  Watchdog::Scope guard(&watchdog_, kBaselineSetupS * comm_.timeouts().scale,
                        "closing the " + std::string(to_string(*open_baseline_)) + " baseline");
  baselines_->end(*open_baseline_, comm_);
  open_baseline_.reset();
}

json Session::end_meta() {
  json meta = meta_;
  // The peers' mappings go now rather than in the teardown, so that the file written next holds
  // how long unmapping took. Not after a fatal error (the GPU may be broken) or a stop signal
  // (a SIGKILL may follow: no optional work): the teardown unmaps them then, untimed. Every rank
  // meets in unmap_peers either way (it is collective).
  if (buffers_) {
    Watchdog::Scope guard(&watchdog_, kTeardownS * comm_.timeouts().scale, "unmapping the peers' buffers");
    buffers_->unmap_peers(comm_, !fatal_ && !stopping_);
    meta["peer_mapping"] = buffers_->mapping_meta();
  }
  // The timers again: their offset at the end shows how far they drifted during the sweep. A
  // failed calibration costs only the drift figure: it is kept as a note, the results stand.
  json clock_end;
  if (!fatal_ && !sanitizer_mode_ && !stopping_) {
    try {
      clock_end = calibrate_gpu_clock().to_json();
    } catch (const std::exception& e) {
      clock_end = {{"failed", e.what()}};
    }
  }
  const std::vector<json> ends = gather_values(comm_, clock_end, "gathering the end-of-run clock offsets");
  add_timer_calibration(meta, ranks_, ends, double(host_clock_ns() - sweep_start_ns_) * 1e-9);
  if (me_ == 0)
    for (const json& note : meta["timer_calibration"].value("notes", json::array()))
      std::fprintf(stderr, "p2pbench: note: %s\n", note.get<std::string>().c_str());
  if (link_ && !fatal_) {
    link_->finish(meta);
    // The driver's own version string, where NVML answered (the CUDA number is in meta).
    if (meta["health_before"].contains("driver_version"))
      for (json& g : meta["gpus"]) g["driver_version"] = meta["health_before"]["driver_version"];
    add_verdicts(meta);  // health and contention, from the snapshots and every rank's pid
  }
  return meta;
}

// The normal end, an agreed stop (signal_number > 0) and a fatal error all come here: every
// rank is at the same step.
int Session::finish(int signal_number) {
  if (open_baseline_ && !fatal_) close_baseline();  // a fatal end aborts it instead (end_process)
  const json meta = end_meta();
  int status = any_failed_ || !incomplete_reason_.empty() ? kExitFailure : kExitOk;
  if (signal_number) status = 128 + signal_number;
  if (me_ == 0) {
    const json summary = summarize_cases(finished_, facts_);
    if (!summary.empty()) {
      std::printf("\n%s\n", summary_heading(summary).c_str());
      for (const auto& line : summary_lines(summary)) std::printf("  %s\n", line.c_str());
    }
    print_trade_table(stdout, finished_);  // interference cases only
    const MatrixReport matrices = build_matrix_report(finished_, pair_links_from_meta(meta, comm_.size()));
    const json comparison = compare_methods(finished_, facts_);
    if (!comparison.empty()) {
      std::printf("\n%s\n", comparison_heading(comparison).c_str());
      for (const auto& line : comparison_lines(comparison)) std::printf("  %s\n", line.c_str());
    }
    try {
      results_->finish(meta, summary, comparison, incomplete_reason_, to_json(matrices));
      std::printf("\nresults: %s (%zu cases%s)\n", results_->path().c_str(), results_->cases_done(), incomplete_reason_.empty() ? "" : ", INCOMPLETE");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "p2pbench: error: %s\n", e.what());
      status = std::max(status, int(kExitFailure));
    }
    print_matrix_findings(stdout, matrices);
    if (meta.contains("verdicts")) print_verdicts(stdout, meta["verdicts"]);
    status = std::max(status, report_expectations(stdout, options_.expectations, finished_, meta));
    if (!incomplete_reason_.empty()) std::fprintf(stderr, "p2pbench: %s\n", incomplete_reason_.c_str());
    if (any_failed_) std::fprintf(stderr, "p2pbench: some cases failed; see the 'error' fields\n");
  }
  if (fault_ && fault_->due_at_end(me_)) fault_->raise_host_fault("the end of the run (the results file is complete)");
  status = agree_on_status(status);
  if (fatal_) end_process(status);  // no teardown that could touch a broken or busy GPU
  return std::max(status, teardown());
}

int Session::agree_on_status(int status) { return int(comm_.max(double(status), "agreeing on the exit status")); }

// Every step of the end has a deadline: a peer stopped after the file was written must not
// keep this rank alive (its expiry adds a note to the finished file and exits with 1).
int Session::teardown() {
  {
    Watchdog::Scope guard(&watchdog_, kTeardownS * comm_.timeouts().scale, "freeing the buffers");
    if (fault_ && fault_->hangs_at_end(me_)) hang_the_gpu_in_teardown();
    if (buffers_) buffers_->close(comm_);
  }
  {
    Watchdog::Scope guard(&watchdog_, kFinalizeS * comm_.timeouts().scale, "ending NCCL and MPI (MPI_Finalize)");
    baselines_.reset();
    comm_.finalize();
  }
  // The writer leaves last: a peer stopped after its last step would keep the job alive (the
  // launcher waits for every process), so the writer says so and exits non-zero, which ends it.
  if (me_ != 0) return kExitOk;
  const auto stopped = comm_.peer_stopped_at_exit(kLastRankWaitS * comm_.timeouts().scale);
  if (!stopped) return kExitOk;
  std::fprintf(stderr, "p2pbench: error: %s at the end of the run\n", stopped->c_str());
  write_partial("a rank was stopped at the end of the run", *stopped);
  return kExitFailure;
}

// The end-of-run GPU fault: a kernel that never ends, waited for with no deadline of its own as
// a teardown call waits on a hung GPU. Only the watchdog over the teardown ends this rank.
void Session::hang_the_gpu_in_teardown() {
  std::fprintf(stderr, "p2pbench: rank %d: injecting a hung GPU under the teardown\n", me_);
  std::fflush(stderr);
  Stream stream = make_stream("fault injection");
  kernels::enqueue_hang(600.0, stream.get());
  cudaStreamSynchronize(stream.get());
}

// A rank never arrived: the ranks that did write what finished (the lowest of them writes,
// so rank 1 takes over when rank 0 is the one lost), then the job ends.
void Session::end_after_peer_lost(const PeerLost& e) {
  std::fprintf(stderr, "p2pbench: error: %s\n", e.what());
  const auto& arrived = e.arrived_ranks();
  // A rank resumed after it was stopped (mpirun ends the job after another rank reported this
  // one lost: SIGCONT, then SIGTERM) finds that rank gone: it must not overwrite the account
  // that names it as the one lost.
  const bool being_ended = stop_signal_received() != 0 || results_->says_rank_was_lost(me_);
  if (!arrived.empty() && arrived.front() == me_ && !being_ended) {
    results_->make_writer();
    const auto& missing = e.missing_ranks();
    write_partial(missing.empty() ? std::string("a rank was lost") : "rank " + std::to_string(missing.front()) + " was lost",
                  e.what());
  }
  comm_.abort(kExitFailure);
}

// An error outside every lock-step (a bug, an environment failure): say what it was, keep the
// rows, end the job (the other ranks cannot learn of it otherwise).
void Session::end_after_error(const std::string& message) {
  std::fprintf(stderr, "p2pbench: error (rank %d): %s\n", me_, message.c_str());
  // Every rank holds the rows: the failing one writes, as only it knows why (the others find
  // it gone, and the one being ended by the launcher leaves this account alone).
  results_->make_writer();
  write_partial("stopped by an error on rank " + std::to_string(me_), message);
  comm_.abort(kExitFailure);
}

void Session::on_watchdog(const std::string& message) {
  std::fprintf(stderr, "p2pbench: error (rank %d): %s\n", me_, message.c_str());
  if (results_->writer()) write_partial("stopped by the watchdog on rank " + std::to_string(me_), message);
}

std::string Session::after_cases(const std::string& what) const {
  return what + " after " + std::to_string(results_->cases_done()) + " of " + std::to_string(results_->cases_total()) +
         " cases";
}

void Session::write_partial(const std::string& what, const std::string& detail) {
  const auto written =
      results_->write_now(after_cases(what) + ": " + detail, what + " after the results were complete: " + detail);
  if (written == ResultsFile::Written::kNote)
    std::fprintf(stderr, "p2pbench: results complete: %s (a note in it says what failed afterwards)\n",
                 results_->path().c_str());
  if (written == ResultsFile::Written::kCheckpoint)
    std::fprintf(stderr, "p2pbench: results so far: %s (INCOMPLETE)\n", results_->path().c_str());
}

// Ends the process without running CUDA destructors: after a sticky error or a hung kernel,
// freeing memory can block forever behind the GPU. MPI is finalised first (every rank is here).
void Session::end_process(int status) {
  {
    Watchdog::Scope guard(&watchdog_, kTeardownS * comm_.timeouts().scale, "ending MPI after a fatal error");
    baselines_.reset();  // aborts an NCCL communicator before anything else goes
    comm_.finalize();
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(status);
}

}  // namespace p2pbench
