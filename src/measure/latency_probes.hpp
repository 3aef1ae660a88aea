// The latency methods' procedures for the one case loop (case_procedure.hpp), and what they
// share across cases:
//  latency_signal  ping-pong between the GPUs (one-way = half the round trip), gated start
//                  (ping_pong_case.cpp);
//  latency_read    a pointer chase through the peer's memory, ns per dependent load
//                  (read_chase_case.cpp); latency_host the same chase through this GPU's
//                  pinned host memory (cases r -> r);
//  latency_ce      a small cudaMemcpyAsync to the peer: issue -> completion, and the interval
//                  between back-to-back copies (small_copy_case.cpp).
// Each kept sample is one figure (microseconds); every payload or chain end is checked.
#pragma once

#include <memory>
#include <string>

#include "comm/communicator.hpp"
#include "common/cuda_raii.hpp"
#include "device/peer_buffers.hpp"
#include "device/shared_gate.hpp"
#include "measure/case_procedure.hpp"
#include "measure/lock_step.hpp"
#include "measure/runner_options.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

class LatencyProbes {
 public:
  // `peak_sm_clock_mhz`: this rank's GPU (the pointer chase converts its reader's cycles with it).
  LatencyProbes(const Communicator& comm, const RunnerOptions& options, SharedGate& gate, PeerBuffers& buffers,
                double peak_sm_clock_mhz);

  // The case's procedure (its method's), for run_procedure.
  std::unique_ptr<CaseProcedure> procedure_for(const CaseSpec& c, uint64_t case_index);

  // What the procedures use. sync() records `stop` on the stream and waits for it, bounded.
  const Communicator& comm() const { return comm_; }
  int rank() const { return comm_.rank(); }
  const LockStep& steps() const { return steps_; }
  const RunnerOptions& options() const { return options_; }
  SharedGate& gate() { return gate_; }
  PeerBuffers& buffers() { return buffers_; }
  cudaStream_t stream() const { return stream_.get(); }
  cudaEvent_t start() const { return start_.get(); }
  cudaEvent_t stop() const { return stop_.get(); }
  void* result_host() const { return result_.host(); }
  void* result_device() const { return result_.device(); }
  void* stamps_host() const { return stamps_.host(); }
  void* stamps_device() const { return stamps_.device(); }
  double peak_sm_clock_mhz() const { return peak_sm_clock_mhz_; }
  void sync(const std::string& what) const;
  // The start gate's deadline for a spin kernel, scaled.
  double gate_timeout_s() const { return options_.gate_timeout_s * options_.timeout_scale; }

 private:
  const Communicator& comm_;
  LockStep steps_;
  RunnerOptions options_;
  SharedGate& gate_;
  PeerBuffers& buffers_;
  Stream stream_;
  Event start_, stop_;
  MappedHostBuffer result_;  // the kernels' result structs, read by the host
  MappedHostBuffer stamps_;  // the gate kernel's stamps
  double peak_sm_clock_mhz_;
};

// Every latency procedure's first step: the pair must reach each other's memory (the same
// answer on every rank; not asked where `needs_peer` is false: latency_host), and the kernel's
// own limits, agreed by every rank.
bool agree_on_latency_skips(LatencyProbes& probes, const std::function<std::optional<std::string>()>& unsupported,
                            CaseOutcome& out, bool needs_peer = true);

// The procedures (each in its own file).
std::unique_ptr<CaseProcedure> ping_pong_case(LatencyProbes& probes, const CaseSpec& c, uint64_t case_index);
std::unique_ptr<CaseProcedure> read_chase_case(LatencyProbes& probes, const CaseSpec& c);
std::unique_ptr<CaseProcedure> small_copy_case(LatencyProbes& probes, const CaseSpec& c, uint64_t case_index);

}  // namespace p2pbench
