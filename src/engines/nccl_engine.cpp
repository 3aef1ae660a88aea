#include "engines/nccl_engine.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstring>
#include <thread>
#include <vector>

#include "common/captured_kernels.hpp"
#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"
#include "engines/collective_engine.hpp"

#ifdef P2PBENCH_HAVE_NCCL
#include <nccl.h>
#endif

namespace p2pbench {

namespace {

std::string describe(const Flow& f) { return std::to_string(f.src_rank) + " -> " + std::to_string(f.dst_rank); }

}  // namespace

void NcclEngine::prepare(int, int rank, const std::vector<Flow>& mine) {
  for (const Flow& f : mine) {
    if (f.src_rank == f.dst_rank)
      throw RuntimeFailure("the nccl baseline cannot move data from rank " + std::to_string(f.src_rank) + " to itself");
    if (f.src_rank != rank && f.dst_rank != rank)
      throw RuntimeFailure("rank " + std::to_string(rank) + " was prepared for the flow " + describe(f) +
                           ", which it neither sends nor receives");
  }
  rank_ = rank;
  mine_ = mine;
}

namespace {

// Whether `stream` is capturing: a launch outside a capture connects NCCL's peers.
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cuda_check(cudaStreamIsCapturing(stream, &capture), "asking whether an NCCL launch was captured");
  return capture != cudaStreamCaptureStatusNone;
}

}  // namespace

void NcclGridProbe::launched(const std::vector<Transfer>& transfers, cudaStream_t stream) {
  if (!capturing(stream)) last_uncaptured_ = transfers;
}

std::optional<int> NcclGridProbe::blocks(cudaStream_t stream, const Launch& launch, const std::string& what) const {
  if (last_uncaptured_.empty()) return std::nullopt;
  const std::vector<Transfer> operation = last_uncaptured_;
  return int(total_blocks(captured_kernels(stream, [&] { launch(operation, stream); }, what)));
}

std::optional<int> NcclEngine::measure_sms_used(const Transfer&, cudaStream_t stream) {
  return grid_.blocks(stream, [this](const std::vector<Transfer>& t, cudaStream_t s) { launch_fused(t, s); },
                      "one NCCL send/receive group");
}

std::optional<std::string> NcclEngine::verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                              cudaStream_t stream) {
  const std::string error = comm_.async_error();
  if (!error.empty()) return "NCCL reported an asynchronous error: " + error;
  return TransferEngine::verify(dst, bytes, seed, offset, stream);
}

namespace {

class NcclCollectiveEngine final : public CollectiveEngine {
 public:
  NcclCollectiveEngine(NcclCommunicator& comm, const CaseSpec& c) : CollectiveEngine(c), comm_(comm) {}

  std::optional<std::string> unsupported_reason(int device) const override {
    if (auto why = CollectiveEngine::unsupported_reason(device)) return why;
    if (int(ranks().size()) != comm_.size())
      return "NCCL's collectives run on every rank of the job (" + std::to_string(comm_.size()) + "), this case on " +
             std::to_string(ranks().size());
    return std::nullopt;
  }
  void launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) override;
  // NCCL's blocks for the whole operation (its transfers name every flow; `t` alone does not).
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t stream) override {
    return grid_.blocks(stream, [this](const std::vector<Transfer>& t, cudaStream_t s) { launch_fused(t, s); },
                        std::string("one NCCL ") + to_string(op()));
  }
  uint64_t queued_commands() const override { return kNcclQueuedCommands; }
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override {
    const std::string error = comm_.async_error();
    if (!error.empty()) return "NCCL reported an asynchronous error: " + error;
    return CollectiveEngine::verify(dst, bytes, seed, offset, stream);
  }

 private:
  // Enqueues the all-to-all's group of sends and receives; an ncclResult_t (nccl.h stays out of
  // the header part of this file).
  int all_to_all(const void* in, void* out, cudaStream_t stream);

  NcclCommunicator& comm_;
  NcclGridProbe grid_;
};

}  // namespace

std::unique_ptr<TransferEngine> make_nccl_collective_engine(NcclCommunicator& comm, const CaseSpec& c) {
  return std::make_unique<NcclCollectiveEngine>(comm, c);
}

#ifdef P2PBENCH_HAVE_NCCL

namespace {

ncclComm_t as_comm(void* p) { return static_cast<ncclComm_t>(p); }

std::string describe(const std::string& what, ncclResult_t result, ncclComm_t comm) {
  std::string message = what + ": " + ncclGetErrorString(result);
  const char* detail = ncclGetLastError(comm);
  if (detail && *detail) message += std::string(" (") + detail + ")";
  return message;
}

// Throws RuntimeFailure("<what>: <NCCL error string> (<NCCL's last message>)"). A non-blocking
// communicator's ncclInProgress is no failure: the caller awaits it.
void nccl_check(ncclResult_t result, const std::string& what, ncclComm_t comm = nullptr) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  throw RuntimeFailure(describe(what, result, comm));
}

// The same for the communicator's own steps, which abort it first: a communicator in error
// is never used again, and aborting ends whatever NCCL still runs for it.
void check_or_abort(ncclResult_t result, const std::string& what, NcclCommunicator& comm) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  const std::string message = describe(what, result, as_comm(comm.handle()));
  comm.abort();
  throw RuntimeFailure(message);
}

}  // namespace

bool nccl_in_build() { return true; }

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // Since 2.9 the code is major * 10000 + minor * 100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::string NcclCommunicator::unique_id() {
  ncclUniqueId id;
  nccl_check(ncclGetUniqueId(&id), "creating the NCCL unique id (bootstrap over NCCL_SOCKET_IFNAME)");
  return std::string(reinterpret_cast<const char*>(&id), sizeof id);
}

NcclCommunicator::NcclCommunicator(const std::string& unique_id, int nranks, int rank, double deadline_s,
                                   PeerWatch watch)
    : rank_(rank), size_(nranks), deadline_s_(deadline_s), watch_(std::move(watch)) {
  ncclUniqueId id;
  if (unique_id.size() != sizeof id)
    throw RuntimeFailure("the NCCL unique id has " + std::to_string(unique_id.size()) + " bytes, expected " +
                         std::to_string(sizeof id));
  std::memcpy(&id, unique_id.data(), sizeof id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  const std::string what = "creating the NCCL communicator (ncclCommInitRankConfig, rank " + std::to_string(rank) +
                           " of " + std::to_string(nranks) + ")";
  const ncclResult_t result = ncclCommInitRankConfig(&comm, nranks, id, rank, &config);
  comm_ = comm;  // set even on failure, so that it is aborted
  check_or_abort(result, what, *this);
  await(what);
}

NcclCommunicator::~NcclCommunicator() { abort(); }

void NcclCommunicator::abort() {
  if (!comm_) return;
  ncclCommAbort(as_comm(comm_));
  comm_ = nullptr;
}

void NcclCommunicator::await(const std::string& what) {
  constexpr int kPollsPerLook = 100;  // a look at the peers' processes every ~10 ms
  RunningDeadline deadline(deadline_s_);  // a job suspended as a whole spends none of it
  for (int polls = 1; comm_; ++polls) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t read = ncclCommGetAsyncError(as_comm(comm_), &state);
    if (read != ncclSuccess) state = read;
    if (state == ncclSuccess) return;
    check_or_abort(state, what, *this);
    if (polls % kPollsPerLook == 0 && watch_)
      if (const auto gone = watch_()) {
        abort();
        throw RuntimeFailure(what + ": " + *gone + "; the NCCL communicator was aborted");
      }
    if (deadline.passed()) {
      abort();
      throw RuntimeFailure(what + ": NCCL had not finished after " + std::to_string(int(deadline_s_)) +
                           " s (is a peer stopped or gone?); the communicator was aborted");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  throw RuntimeFailure(what + ": the NCCL communicator was aborted");
}

// ncclCommFinalize waits (in the background, awaited) for every operation still queued.
void NcclCommunicator::close() {
  if (!comm_) return;
  check_or_abort(ncclCommFinalize(as_comm(comm_)), "finalizing the NCCL communicator", *this);
  await("finalizing the NCCL communicator");
  check_or_abort(ncclCommDestroy(as_comm(comm_)), "destroying the NCCL communicator", *this);
  comm_ = nullptr;
}

std::string NcclCommunicator::async_error() const {
  if (!comm_) return "";
  ncclResult_t state = ncclSuccess;
  const ncclResult_t r = ncclCommGetAsyncError(as_comm(comm_), &state);
  if (r != ncclSuccess) return std::string("reading it failed: ") + ncclGetErrorString(r);
  if (state == ncclSuccess || state == ncclInProgress) return "";
  std::string message = ncclGetErrorString(state);
  const char* detail = ncclGetLastError(as_comm(comm_));
  if (detail && *detail) message += std::string(" (") + detail + ")";
  return message;
}

void NcclEngine::launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) {
  ncclComm_t comm = as_comm(comm_.handle());
  if (!comm) throw RuntimeFailure("an nccl transfer was launched without an NCCL communicator");
  if (rank_ < 0) throw RuntimeFailure("the nccl engine was launched before prepare()");
  for (const Transfer& t : transfers)
    if (std::find(mine_.begin(), mine_.end(), t.flow) == mine_.end())
      throw RuntimeFailure("rank " + std::to_string(rank_) + " was not prepared for the nccl flow " + describe(t.flow));
  // One group: NCCL posts every send and receive of it together, so ranks that send to and
  // receive from each other (bidir, all_to_all) cannot wait on each other's first operation.
  nccl_check(ncclGroupStart(), "starting an NCCL send/receive group", comm);
  try {
    for (const Transfer& t : transfers) {
      if (t.flow.src_rank == rank_)
        nccl_check(ncclSend(t.src, t.bytes, ncclChar, t.flow.dst_rank, comm, stream),
                   "enqueuing ncclSend of " + std::to_string(t.bytes) + " bytes to rank " +
                       std::to_string(t.flow.dst_rank),
                   comm);
      if (t.flow.dst_rank == rank_)
        nccl_check(ncclRecv(t.dst, t.bytes, ncclChar, t.flow.src_rank, comm, stream),
                   "enqueuing ncclRecv of " + std::to_string(t.bytes) + " bytes from rank " +
                       std::to_string(t.flow.src_rank),
                   comm);
    }
  } catch (...) {
    (void)ncclGroupEnd();  // close the group; the first error is the one reported
    throw;
  }
  nccl_check(ncclGroupEnd(), "ending an NCCL send/receive group", comm);
  comm_.await("enqueuing an NCCL send/receive group");
  grid_.launched(transfers, stream);
}

// The ranks' indices are their NCCL ranks: the case spans the communicator, in rank order.
void NcclCollectiveEngine::launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) {
  ncclComm_t comm = as_comm(comm_.handle());
  if (!comm) throw RuntimeFailure("an NCCL collective was launched without an NCCL communicator");
  void* base = addresses_of(transfers).base[me()];
  void* out = output_of(base);
  const std::string what = std::string("enqueuing NCCL's ") + to_string(op()) + " of " + std::to_string(size().bytes) + " bytes";
  ncclResult_t enqueued = ncclSuccess;
  switch (op()) {
    case Collective::kReduceScatter:
      enqueued = ncclReduceScatter(base, out, size().chunk_elements, ncclFloat, ncclSum, comm, stream);
      break;
    case Collective::kAllGather: enqueued = ncclAllGather(base, out, size().chunk_elements, ncclFloat, comm, stream); break;
    case Collective::kAllReduce: enqueued = ncclAllReduce(base, out, size().elements, ncclFloat, ncclSum, comm, stream); break;
    case Collective::kAllToAll: enqueued = ncclResult_t(all_to_all(base, out, stream)); break;
    case Collective::kNone: throw RuntimeFailure("an NCCL collective method names no operation");
  }
  nccl_check(enqueued, what, comm);
  comm_.await(what);
  grid_.launched(transfers, stream);
}

// NCCL has no all-to-all call: nccl-tests' alltoall is this group, a send of chunk r to rank r
// and a receive of rank r's chunk into chunk r of the output, for every rank (itself included,
// as nccl-tests does: NCCL copies that pair locally). The group's first error is its result.
int NcclCollectiveEngine::all_to_all(const void* in, void* out, cudaStream_t stream) {
  ncclComm_t comm = as_comm(comm_.handle());
  const size_t count = size().chunk_elements, bytes = count * kCollectiveElementBytes;  // ncclFloat
  ncclResult_t result = ncclGroupStart();
  for (int r = 0; r < int(ranks().size()) && result == ncclSuccess; ++r) {
    result = ncclSend(static_cast<const char*>(in) + r * bytes, count, ncclFloat, r, comm, stream);
    if (result == ncclSuccess) result = ncclRecv(static_cast<char*>(out) + r * bytes, count, ncclFloat, r, comm, stream);
  }
  const ncclResult_t ended = ncclGroupEnd();  // closed whatever happened inside
  return result != ncclSuccess ? result : ended;
}

#else  // no NCCL in this build

bool nccl_in_build() { return false; }
std::string nccl_version() { return ""; }
std::string NcclCommunicator::unique_id() { throw RuntimeFailure(kNoNcclReason); }
NcclCommunicator::NcclCommunicator(const std::string&, int, int, double, PeerWatch) {
  throw RuntimeFailure(kNoNcclReason);
}
NcclCommunicator::~NcclCommunicator() = default;
void NcclCommunicator::close() {}
void NcclCommunicator::await(const std::string&) {}
void NcclCommunicator::abort() {}
std::string NcclCommunicator::async_error() const { return ""; }
void NcclEngine::launch_fused(const std::vector<Transfer>&, cudaStream_t) { throw RuntimeFailure(kNoNcclReason); }
void NcclCollectiveEngine::launch_fused(const std::vector<Transfer>&, cudaStream_t) { throw RuntimeFailure(kNoNcclReason); }

#endif

}  // namespace p2pbench
