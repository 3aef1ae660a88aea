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
#include "measure/peer_buffers.hpp"
#include "measure/shared_gate.hpp"
#include "measure/transfer_timer.hpp"
#include "sweep/case_spec.hpp"

namespace p2pbench {

struct RunnerOptions {
  int samples = 10;
  double min_sample_time_ms = 1.0;
  double warmup_time_ms = 10.0;
  bool verify = true;
  uint64_t buffer_pool_bytes = 0;
  double gate_timeout_s = 10.0;
  double timeout_scale = 1.0;  // stretches every timeout (e.g. under compute-sanitizer)
  static RunnerOptions from(const Config& c, double timeout_scale);
};

// Where slot k of a case's buffers starts, when small messages rotate through a pool.
struct BufferLayout {
  uint64_t slots = 1;
  uint64_t stride = 0;  // bytes between slot starts
  uint64_t footprint() const { return slots * stride; }
  static BufferLayout for_case(uint64_t bytes, uint64_t pool_bytes);
};

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
  uint32_t ticket_ = 0;
};

}  // namespace p2pbench
