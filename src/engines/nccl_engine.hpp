// The `nccl` baseline: ncclSend/ncclRecv between the two ranks' GPUs, what a communication
// library gives an application. Uni: the source rank sends, the destination rank receives;
// bidir: each rank sends and receives in one group (ncclGroupStart/End), as nccl-tests'
// sendrecv does. NCCL operations are captured into the runner's CUDA graph (NCCL >= 2.9); the
// runner's first ungated transfers (calibration) run uncaptured, so NCCL's peer connections
// exist before capture, and it captures with cudaStreamCaptureModeThreadLocal, as NCCL asks.
//
// This header never includes nccl.h: without NCCL in the build (P2PBENCH_HAVE_NCCL unset) it
// still compiles, nccl_in_build() is false and the communicator refuses to open.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engines/transfer_engine.hpp"

namespace p2pbench {

inline constexpr const char* kNoNcclReason = "this build has no NCCL";

// Whether this build links NCCL.
bool nccl_in_build();
// "2.28.9": the version of the NCCL library loaded at run time ("" without NCCL).
std::string nccl_version();

// Sets what this benchmark needs from NCCL's environment, where the user has not set it:
// NCCL_SOCKET_IFNAME=lo (NCCL bootstraps over sockets; both ranks are on one host, which may
// have no other interface up) and NCCL_NVLS_ENABLE=0 (NVLink multicast stays off on these
// machines). Must run before the first NCCL call of the process (NCCL reads its environment
// once). Returns "NAME=value" for each variable it set.
std::vector<std::string> apply_nccl_environment();

// The NCCL communicator of the ranks, on the current device.
class NcclCommunicator {
 public:
  // On one rank (rank 0): a fresh ncclUniqueId, as bytes to broadcast.
  static std::string unique_id();
  // Collective over all `nranks` ranks (ncclCommInitRank). Throws RuntimeFailure.
  NcclCommunicator(const std::string& unique_id, int nranks, int rank);
  ~NcclCommunicator();  // aborts a communicator that was not closed
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  // Waits for the device, then ncclCommFinalize and ncclCommDestroy. Throws RuntimeFailure
  // (the communicator is aborted then).
  void close();

  void* handle() const { return comm_; }  // ncclComm_t
  int rank() const { return rank_; }
  // NCCL's asynchronous error state ("" while healthy).
  std::string async_error() const;

 private:
  void* comm_ = nullptr;
  int rank_ = -1;
};

class NcclEngine final : public TwoSidedEngine {
 public:
  explicit NcclEngine(NcclCommunicator& comm) : comm_(comm) {}

  void prepare(int device, int rank, const std::vector<Flow>& mine) override;
  void launch(const Transfer& t, cudaStream_t stream) override;
  // An asynchronous NCCL error fails the sample before the bytes are checked.
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;

 private:
  NcclCommunicator& comm_;
  int send_peer_ = -1;     // the rank this one sends to, or -1
  int receive_peer_ = -1;  // the rank this one receives from, or -1
};

}  // namespace p2pbench
