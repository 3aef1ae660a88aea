// How bytes move: one strategy object per method. Who waits for whom (ranks, gate, timing)
// is the runner's business, not the engine's.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plan/case_spec.hpp"
#include "vocab/feeding.hpp"

namespace p2pbench {

namespace kernels {
struct PatternCheck;  // kernels/pattern_kernels.hpp
}
class HostMemory;  // device/host_memory.hpp

// Runs a check kernel that `enqueue` puts on `stream`, accumulating into the result it is handed
// (initialised to no mismatch), and describes what it found among `bytes`: nullopt when no byte
// differs. Engines that check with kernels of their own (gathered or summed data) use it too.
std::optional<std::string> run_device_check(const std::function<void(kernels::PatternCheck*)>& enqueue, uint64_t bytes,
                                            cudaStream_t stream);

struct Transfer {
  const void* src;  // local buffer, peer mapping or mapped host memory
  void* dst;
  size_t bytes;
  Flow flow{0, 1};  // the flow it belongs to (two-sided engines: whom to send to / receive from)
  void* local_signal_area = nullptr;  // the ends' signal areas (Endpoints), for engines that signal
  void* peer_signal_area = nullptr;
  // Its place among the transfers of one sample or calibration run (0 first). Engines whose
  // launches differ by position (atomics alternate signs) read it, so that every capture of a
  // sample, the per-transfer one too, holds the same launches whatever was captured before.
  uint64_t index = 0;
};

// The memory one rank reaches for one flow of a case: its own source buffer and its destination
// slot for that flow, the other end's (IPC mappings: its source, and its destination slot for
// the flow), and a host buffer of the case's kind (null unless the engine asked for it).
struct Endpoints {
  void* local_src = nullptr;
  void* local_dst = nullptr;
  void* peer_src = nullptr;
  void* peer_dst = nullptr;
  void* host = nullptr;  // what copies address in the host buffer (HostMemory::device)
  Flow flow{0, 1};
  int rank = -1;  // the member these are for (one end of `flow`)
  // The host heartbeat GPU-side waits count their timeout with (common/host_heartbeat.hpp), or null.
  const uint64_t* heartbeat = nullptr;
  // This rank's signal area and the other end's (common/signal_area.hpp; null where none).
  void* local_signal_area = nullptr;
  void* peer_signal_area = nullptr;
  // The host buffer behind `host`, of the case's kind (its page size and node), or null.
  const HostMemory* host_memory = nullptr;
};

// A transfer between this member's own buffers, local_src to local_dst, at `offset`: a
// two-sided end's part, or a copy within the member's GPU.
Transfer local_transfer(const Endpoints& e, uint64_t offset, size_t bytes);

class TransferEngine {
 public:
  virtual ~TransferEngine() = default;

  // Why the case cannot run on `device` (the row is then `skipped` with this reason).
  virtual std::optional<std::string> unsupported_reason(int device) const = 0;
  // Two-sided methods enqueue work on both ends of a flow (a sender and a receiver); one-sided
  // methods on one (push: the source, pull: the destination).
  virtual bool two_sided() const { return false; }
  // One-time set-up on the current device before the first launch, for the flows whose work
  // this rank enqueues (two-sided: every flow it sends or receives).
  virtual void prepare(int device, int rank, const std::vector<Flow>& mine) = 0;
  // Whether transfers touch the pinned host buffer (host-link methods).
  virtual bool needs_host_buffer() const { return false; }
  // Where the transfer at byte `offset` of the buffers reads and writes, for the rank that
  // drives `direction`. Default: push reads local and writes the peer; pull the reverse.
  virtual Transfer transfer(Direction direction, const Endpoints& e, uint64_t offset, size_t bytes) const;
  // The regions the pattern is written to before a sample (by the orientation's source rank)
  // and checked in after it (by the destination rank).
  virtual void* source_region(const Endpoints& e) const { return e.local_src; }
  virtual void* destination_region(const Endpoints& e) const { return e.local_dst; }
  // Before each sample: the source rank writes the pattern of `seed`, the destination rank its
  // poison. Methods that accumulate (atomics) reset their target instead.
  virtual void fill_source(void* region, size_t bytes, uint64_t seed, cudaStream_t stream);
  virtual void poison_destination(void* region, size_t bytes, uint64_t seed, cudaStream_t stream);
  // Before the first launch and before each filled sample, on both ends of each flow the member
  // takes part in, with the seed of the pattern the flow's source then holds: engines with state
  // beside the buffers (signals, credits) reset it here, while nothing of the case runs.
  virtual void before_sample(const Endpoints&, uint64_t /*source_seed*/, cudaStream_t) {}
  // Untimed work around each gated sample, for methods timed under a load of their own (the
  // reverse copy of a bidirectional host link). Called once the sample's gate wait is queued on
  // `timed_stream`, before its start is recorded: what it queues there runs when the gate opens,
  // untimed, and work on the engine's own streams may wait for it. `sample_end` (a timing event)
  // is recorded on `timed_stream` when the sample's transfers have ended, before stalled().
  virtual void enqueue_beside(cudaStream_t /*timed_stream*/, cudaEvent_t /*sample_end*/) {}
  // Bytes one transfer of `flow` moves: the case's bytes, unless the method moves a different
  // amount per flow (the tokens methods: what the router sends from one rank to another).
  virtual uint64_t bytes_moved(const Flow&, uint64_t case_bytes) const { return case_bytes; }
  // Whether small messages may rotate through a buffer pool (false: always offset 0).
  virtual bool rotates_buffers() const { return true; }
  // The transfer count a sample uses when the timing asks for `wanted` (accumulating methods
  // need an odd one), and the count the runner chose, which their verification needs.
  virtual uint64_t usable_iterations(uint64_t wanted) const { return wanted; }
  virtual void set_iterations(uint64_t) {}
  // Enqueues one transfer: this rank's part of t.flow (two-sided engines: its send or its
  // receive). Must be capturable into a CUDA graph, unless feeding() says otherwise.
  virtual void launch(const Transfer& t, cudaStream_t stream) = 0;
  // The most stream commands (kernels, copies, stream memory operations) one launch() queues on
  // either end: a caller that queues many transfers behind a closed gate keeps their sum within
  // what the launch queue holds, or the host blocks in a launch while the gate waits for it.
  virtual uint64_t queued_commands() const { return 1; }
  // How the timer feeds this engine's transfers to the GPU (vocab/feeding.hpp): captured in a
  // graph unless launch() queues work no graph holds, or makes synchronous host calls.
  virtual Feeding feeding() const { return Feeding::kCaptured; }
  // How the engine ran where the environment decides it (gds: cuFile's GDS or compatibility
  // mode), after prepare(); recorded in the row as engine_mode. nullopt: nothing to say.
  virtual std::optional<std::string> engine_mode() const { return std::nullopt; }
  // Whether the flows one rank drives in a case must go on one stream in one launch (NCCL: one
  // group of sends and receives, which separate streams on one communicator could deadlock).
  // Their per-flow figures are then the group's.
  virtual bool fuses_flows() const { return false; }
  // Enqueues one transfer of each of `transfers` (each naming its flow) as one unit of `stream`.
  // Fusing engines override it; so do engines whose transfers must run at once rather than one
  // after the other when they share a stream (staged). Default: one launch after another.
  virtual void launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) {
    for (const Transfer& t : transfers) launch(t, stream);
  }
  // SMs one transfer occupies, measured with a launch (0 for the copy engine; nullopt when
  // the method has no SM count).
  virtual std::optional<int> measure_sms_used(const Transfer& t, cudaStream_t stream) = 0;
  // After each sample's work finished, verified or not: why a wait of this member's work gave up
  // (engines whose ends wait for each other record their timeouts), or nullopt. The sample then
  // fails with it: a stalled pipeline must not pass for a fast one.
  virtual std::optional<std::string> stalled() { return std::nullopt; }
  // Verifies `bytes` at dst against the pattern of `seed` at pattern offset `offset`; returns
  // nullopt when every byte matches, else a description of the first mismatch.
  virtual std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                            cudaStream_t stream);
};

// Methods whose both ends enqueue work (a sender and a receiver: the baselines), each end on its
// own buffers: the sender reads local_src, the receiver writes local_dst. No SM count.
class TwoSidedEngine : public TransferEngine {
 public:
  std::optional<std::string> unsupported_reason(int) const override { return std::nullopt; }
  bool two_sided() const override { return true; }
  Transfer transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const override;
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }
};

// The engine of a case's method and shape (engine_registry.cpp), or null where the method has
// none of its own.
std::unique_ptr<TransferEngine> make_engine(const CaseSpec& c);
// What builds a case's engine where session resources count too (the session's: the registry's
// engines, then the baselines' on the NCCL communicator or the staging area); null where none.
using EngineFactory = std::function<std::unique_ptr<TransferEngine>(const CaseSpec&)>;

}  // namespace p2pbench
