// The `nccl` baseline: ncclSend/ncclRecv between the ranks' GPUs, what a communication library
// gives an application. One communicator spans every rank of the job. In a case, a rank sends
// each flow it is the source of (ncclSend to the flow's destination) and receives each flow it
// is the destination of (ncclRecv from its source), all of them in ONE group
// (ncclGroupStart/End) on one stream, as nccl-tests' sendrecv and alltoall do: fuses_flows().
// Flows may cross nodes (NCCL's network transport; see nccl_environment.hpp for the node
// override). NCCL operations are captured into the runner's CUDA graph (NCCL >= 2.9); the
// runner's first ungated transfers (calibration) run uncaptured, so NCCL's peer connections
// exist before capture, and it captures with cudaStreamCaptureModeThreadLocal, as NCCL asks.
//
// This header never includes nccl.h: without NCCL in the build (P2PBENCH_HAVE_NCCL unset) it
// still compiles, nccl_in_build() is false and the communicator refuses to open.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engines/transfer_engine.hpp"

namespace p2pbench {

inline constexpr const char* kNoNcclReason = "this build has no NCCL";
// What an NCCL operation counts as in a stream's queue: a kernel behind a closed start gate takes
// none of the work NCCL queues for it in host memory, so a caller keeps at most a few operations
// there (the interference loop: 256 commands' worth, 32 operations).
inline constexpr uint64_t kNcclQueuedCommands = 8;

// Whether this build links NCCL.
bool nccl_in_build();
// "2.28.9": the version of the NCCL library loaded at run time ("" without NCCL).
std::string nccl_version();

// The NCCL communicator of the ranks, on the current device. Non-blocking (NCCL's blocking = 0):
// no NCCL call holds this thread; what NCCL still does in the background (connecting to a peer,
// enqueuing a group, finalizing) is polled with a deadline, and a wait past it aborts the
// communicator (ncclCommAbort, which also ends NCCL's kernels) so that a stopped or lost peer
// cannot hold this rank inside NCCL.
class NcclCommunicator {
 public:
  // On one rank (rank 0): a fresh ncclUniqueId, as bytes to broadcast.
  static std::string unique_id();
  // A peer that is not running, in words, or nullopt (PeerGroup::peer_not_running).
  using PeerWatch = std::function<std::optional<std::string>()>;
  // Collective over all `nranks` ranks (ncclCommInitRankConfig). `deadline_s`: how long any one
  // of NCCL's background steps may take; `watch`, asked while one runs, ends it early when a
  // peer is gone. Throws RuntimeFailure.
  NcclCommunicator(const std::string& unique_id, int nranks, int rank, double deadline_s, PeerWatch watch = {});
  ~NcclCommunicator();  // aborts a communicator that was not closed
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  // Waits for the device, then ncclCommFinalize and ncclCommDestroy, each within the deadline.
  // Throws RuntimeFailure (the communicator is aborted then).
  void close();
  // Waits, within the deadline, for what NCCL does in the background after a call that
  // returned ncclInProgress. Past the deadline, on NCCL's error or with a peer gone: aborts the
  // communicator and throws RuntimeFailure naming `what`.
  void await(const std::string& what);
  // ncclCommAbort now (NCCL's kernels end); later uses find no communicator.
  void abort();

  void* handle() const { return comm_; }  // ncclComm_t
  int rank() const { return rank_; }
  int size() const { return size_; }
  // NCCL's asynchronous error state ("" while healthy).
  std::string async_error() const;

 private:
  void* comm_ = nullptr;
  int rank_ = -1;
  int size_ = 0;
  double deadline_s_ = 0;
  PeerWatch watch_;
};

// What an NCCL engine's rows report as its SMs: the blocks of the kernels NCCL launches for an
// operation (its CTAs, a channel each, each on an SM of its own). The engine's last operation
// launched outside a capture is captured again, never launched, and its kernel nodes' grids summed
// (common/captured_kernels.hpp). nullopt before such a launch: it connected the peers, and a
// capture that had to connect them would wait for the peer inside the capture.
class NcclGridProbe {
 public:
  using Launch = std::function<void(const std::vector<Transfer>&, cudaStream_t)>;
  // After each launch of `transfers` on `stream` (captured or not).
  void launched(const std::vector<Transfer>& transfers, cudaStream_t stream);
  // `launch` enqueues an operation as the engine does; `what` names it in errors.
  std::optional<int> blocks(cudaStream_t stream, const Launch& launch, const std::string& what) const;

 private:
  std::vector<Transfer> last_uncaptured_;
};

class NcclEngine final : public TwoSidedEngine {
 public:
  explicit NcclEngine(NcclCommunicator& comm) : comm_(comm) {}

  // `mine`: every flow this rank sends or receives in the case. Throws RuntimeFailure for a
  // flow to itself or one it takes no part in.
  void prepare(int device, int rank, const std::vector<Flow>& mine) override;
  bool fuses_flows() const override { return true; }
  // One group of this rank's side of t.flow.
  void launch(const Transfer& t, cudaStream_t stream) override { launch_fused({t}, stream); }
  // One group: per transfer, ncclSend(t.src) to t.flow.dst_rank where this rank is the
  // source, ncclRecv(t.dst) from t.flow.src_rank where it is the destination.
  void launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) override;
  // An asynchronous NCCL error fails the sample before the bytes are checked.
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;
  // NCCL's blocks for this rank's whole group (a send and a receive both ways, not `t` alone).
  std::optional<int> measure_sms_used(const Transfer& t, cudaStream_t stream) override;
  uint64_t queued_commands() const override { return kNcclQueuedCommands; }

 private:
  NcclCommunicator& comm_;
  int rank_ = -1;
  std::vector<Flow> mine_;  // what prepare() was given
  NcclGridProbe grid_;
};

// NCCL's collectives (nccl_reduce_scatter, nccl_all_gather, nccl_all_reduce: f32, sum; nccl_all_to_all) on the
// communicator, the same buffers, operands and check as the collectives built from puts
// (engines/collective_engine.hpp). Their cases must span every rank of the communicator.
std::unique_ptr<TransferEngine> make_nccl_collective_engine(NcclCommunicator& comm, const CaseSpec& c);

}  // namespace p2pbench
