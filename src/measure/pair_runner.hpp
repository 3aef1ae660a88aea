// Who waits for whom: runs one case on both ranks in lock-step. Every rank calls run() with
// the same case; the runner owns calibration, warm-up, the start gate, timing, verification
// and the exchange of samples. How the bytes move is the engine's business.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "common/cuda_raii.hpp"
#include "config/config.hpp"
#include "engines/baseline_resources.hpp"
#include "engines/transfer_engine.hpp"
#include "kernels/gate_kernels.hpp"
#include "measure/case_outcome.hpp"
#include "measure/lock_step.hpp"
#include "measure/runner_options.hpp"
#include "measure/peer_buffers.hpp"
#include "measure/shared_gate.hpp"
#include "measure/transfer_timer.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

class PairRunner {
 public:
  // `baselines` (may be null) builds the engines of baseline methods (staged, nccl).
  PairRunner(const Communicator& comm, const RunnerOptions& options, int device, SharedGate& gate,
             PeerBuffers& buffers, BaselineResources* baselines = nullptr);

  CaseOutcome run(const CaseSpec& c, uint64_t case_index);

 private:

  // Turns the driving ranks' reports of one sample into the outcome's samples.
  static void record_sample(const CaseSpec& c, const std::vector<nlohmann::json>& finished, CaseOutcome& out);
  // The memory this rank reaches for the engine's case (the host buffer is made on first use).
  Endpoints endpoints_for(const TransferEngine& engine);

  const Communicator& comm_;
  LockStep steps_;
  RunnerOptions options_;
  int device_;
  SharedGate& gate_;
  PeerBuffers& buffers_;
  TransferTimer timer_;
  BaselineResources* baselines_;
  std::optional<MappedHostBuffer> host_buffer_;
};

}  // namespace p2pbench
