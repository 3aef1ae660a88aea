// Who waits for whom, for one case of any number of concurrent flows: the one case loop of
// every front end. Each step runs on every member of the group (CaseGroup) and ends with every
// member's report, so the members stay in lock-step even when one of them fails:
//   1. agree on skips          (the plan's reasons, memory paths, the engine's limits)
//   2. prepare                 (fill sources, set up the engine, count SMs, calibrate, capture
//                               each lane's sample graph, warm up)
//   3. per sample: fill and poison, queue every lane behind the closed gate, open it, wait
//   4. verify every destination slot the sample wrote, against its source's pattern
// A lane is what one member enqueues on one stream: one flow, or (engines that fuse flows) all
// the flows the member drives. How the bytes move is the engine's business.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "engines/transfer_engine.hpp"
#include "measure/case_group.hpp"
#include "measure/case_outcome.hpp"
#include "measure/case_procedure.hpp"
#include "measure/runner_options.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

class CaseLoop {
 public:
  // `make_engine` builds the case's engine for each local member (null: not in this build).
  CaseLoop(CaseGroup& group, const RunnerOptions& options, const CaseSpec& c, uint64_t case_index,
           const EngineFactory& make_engine);
  ~CaseLoop();  // drops the lanes' graphs (a graph may hold an NCCL communicator)
  CaseLoop(const CaseLoop&) = delete;
  CaseLoop& operator=(const CaseLoop&) = delete;

  // Each step returns false when the case ended there (`out` says why).
  bool agree_on_skips(CaseOutcome& out);
  // `choose_iterations` (optional) maps the calibrated transfers per sample to those used.
  bool prepare(CaseOutcome& out, const std::function<uint64_t(uint64_t)>& choose_iterations = {});
  // One gated sample; its figures are appended to `out`. `fill` false: the buffers keep their
  // contents (the Google Benchmark front end refills only when verifying).
  bool sample(int index, CaseOutcome& out, bool fill = true);
  bool verify(int index, CaseOutcome& out);
  // After the samples: one more gated sample of the same transfers with an event after each
  // (TransferTimer::build_stamped), verified, whose per-transfer times become each flow's
  // transfer_us (the tails); it adds no bandwidth sample.
  bool stamped_sample(CaseOutcome& out);
  // A sample's length as calibrated (the slowest member's transfer times the count), in ms.
  double sample_ms() const;

  uint64_t iterations() const { return iterations_; }

  // A background load (latency under load), after prepare(): every lane replays its sample
  // graph, ungated, for about `seconds`; finish_background() says whether every lane was still
  // running when it was called (the load covered what ran beside it) and adds one sample of
  // the load's figures to `out`.
  bool start_background(double seconds, CaseOutcome& out);
  bool finish_background(CaseOutcome& out, bool& covered);

 private:
  struct Lane {
    std::vector<Flow> flows;
    size_t timer = 0;  // the member's timer index
  };
  struct Member {
    int id = -1;
    std::unique_ptr<TransferEngine> engine;
    std::vector<Flow> involved;  // flows with this member at either end
    std::vector<Lane> lanes;     // what it drives
    bool fills_source = false;
    std::vector<Flow> incoming;  // flows it receives (verifies)
  };

  std::vector<StepReport> step(const char* what, const std::function<void(Member&, StepReport&)>& local,
                               double local_work_s);
  void plan_member(Member& m);
  int slot_of(const Flow& f) const;  // plan/device_memory: destination_slot
  Endpoints endpoints(const Member& m, const Flow& f);
  void enqueue(Member& m, const Lane& lane, uint64_t index, cudaStream_t stream);
  void fill_for_calibration(Member& m);
  void calibrate(Member& m, StepReport& report);
  void fill_and_poison(Member& m, uint64_t sample_seed, bool poison);
  std::optional<std::string> host_placement_skip(const Member& m) const;
  void record(const std::vector<StepReport>& reports, CaseOutcome& out) const;
  void delay_if_slowed(const Lane& lane, cudaStream_t stream) const;
  // The case's flows in out.flows, without figures, unless already there.
  void name_flows(CaseOutcome& out) const;
  void record_transfer_times(const std::vector<StepReport>& reports, CaseOutcome& out) const;
  // A gated sample (the stamped graph where `stamped`), queued by every member and waited for.
  bool run_gated(int index, CaseOutcome& out, bool fill, bool stamped, std::vector<StepReport>& finished);
  uint64_t flow_bytes(const Flow& f) const;  // one transfer of the flow (the engine's bytes_moved)

  CaseGroup& group_;
  RunnerOptions options_;
  CaseSpec case_;
  uint64_t case_index_;
  BufferLayout layout_;
  std::vector<Member> members_;
  uint64_t iterations_ = 0;
  double single_ms_ = 0;
  uint64_t seed_ = 0;
  uint64_t background_launches_ = 0;
};

// The copy methods' procedure for the one case loop (case_procedure.hpp): CaseLoop's steps,
// each sample verified before it is kept.
std::unique_ptr<CaseProcedure> copy_procedure(CaseGroup& group, const RunnerOptions& options, const CaseSpec& c,
                                              uint64_t case_index, const EngineFactory& make_engine);
// The same, run through the loop.
CaseOutcome run_case(CaseGroup& group, const RunnerOptions& options, const CaseSpec& c, uint64_t case_index,
                     const EngineFactory& make_engine);

}  // namespace p2pbench
