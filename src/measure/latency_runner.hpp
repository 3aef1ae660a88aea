// Latency methods, run on both ranks in lock-step:
//  latency_signal  ping-pong between the GPUs (one-way = half the round trip), gated start;
//  latency_read    a pointer chase through the peer's memory (ns per dependent load);
//  latency_ce      a small cudaMemcpyAsync to the peer: issue -> completion, and the interval
//                  between back-to-back copies.
// Each sample is one figure (microseconds); every payload or chain end is checked.
#pragma once

#include "comm/communicator.hpp"
#include "common/cuda_raii.hpp"
#include "measure/case_outcome.hpp"
#include "measure/lock_step.hpp"
#include "device/peer_buffers.hpp"
#include "measure/runner_options.hpp"
#include "device/shared_gate.hpp"
#include "kernels/latency_kernels.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

// The reader's figures of one latency_read sample, per load over all its launches, and the SM
// each launch chased from (latency_read.cpp).
struct ChaseSample {
  uint64_t loads = 0;
  double kernel_ns_per_load = 0;  // the in-kernel timer
  double event_ns_per_load = 0;   // CUDA events around each launch
  double cycles_per_load = 0;
  double us_at_peak_clock = 0;    // cycles at the reader GPU's peak SM clock
  std::vector<unsigned> launch_sm;               // per launch
  std::vector<double> launch_ns_per_load;        // per launch, in-kernel timer
};

class LatencyRunner {
 public:
  // `peak_sm_clock_mhz`: this rank's GPU (the pointer chase converts its reader's cycles with it).
  LatencyRunner(const Communicator& comm, const RunnerOptions& options, SharedGate& gate, PeerBuffers& buffers,
                double peak_sm_clock_mhz);
  CaseOutcome run(const CaseSpec& c, uint64_t case_index);

 private:
  void run_signal(const CaseSpec& c, uint64_t case_index, CaseOutcome& out);
  kernels::PingPongArgs ping_pong_args(const CaseSpec& c, uint64_t case_index) const;
  // latency_read (latency_read.cpp): the chase variants of CaseSpec::read_chase.
  void run_read(const CaseSpec& c, CaseOutcome& out);
  bool build_chain(const CaseSpec& c, const ReadChase& r, int grid, uint32_t ticket, CaseOutcome& out);
  bool end_owner_spin(const CaseSpec& c, const ReadChase& r, CaseOutcome& out);
  // One sample on the reader; a chain that ends where it should not sets report.verify_error.
  void chase_sample(const CaseSpec& c, const ReadChase& r, int grid_blocks, StepReport& report, ChaseSample& sample) const;
  void run_copy(const CaseSpec& c, uint64_t case_index, CaseOutcome& out);
  void sync(const std::string& what) const;
  // The other end of the case's one flow, seen from this rank.
  int peer_of(const CaseSpec& c) const;

  const Communicator& comm_;
  LockStep steps_;
  RunnerOptions options_;
  SharedGate& gate_;
  PeerBuffers& buffers_;
  Stream stream_;
  Event start_, stop_;  // stop_ is recorded by sync()
  MappedHostBuffer result_;  // the kernels' result structs, read by the host
  MappedHostBuffer stamps_;  // the gate kernel's stamps
  double peak_sm_clock_mhz_;
};

}  // namespace p2pbench
