// The communication layer: the only code that talks MPI (mpi.h is included in
// communicator.cpp alone). Everything crosses as plain bytes: the MPI here is not CUDA-aware.
//
// No step waits without a deadline. Every collective is built on one primitive, exchange():
// each rank sends its bytes to every other rank and polls for theirs against a clock, so on
// expiry it knows exactly which ranks never arrived. A peer on the same host that is stopped
// (SIGSTOP, a paused container) or gone is recognised long before the deadline from its
// process state; one on another host only by the deadline. Time this process itself spent
// stopped (a job suspended as a whole) is not counted against the peers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/peer_group.hpp"

namespace p2pbench {

struct CommTimeouts {
  double step_s = 60.0;   // default deadline of a collective step (callers size their own)
  double stale_s = 5.0;   // a node-local peer stopped this long is reported as lost
  double scale = 1.0;     // --timeout-scale: multiplies both, and every deadline passed in
};

// One or more ranks did not arrive at a step in time. Thrown on the ranks that did; the job
// must then end (nothing may re-enter a collective with a suspect rank).
class PeerLost : public RuntimeFailure {
 public:
  PeerLost(const std::string& message, std::vector<int> missing, std::vector<int> arrived)
      : RuntimeFailure(message), missing_(std::move(missing)), arrived_(std::move(arrived)) {}
  const std::vector<int>& missing_ranks() const { return missing_; }
  const std::vector<int>& arrived_ranks() const { return arrived_; }
  bool missing(int rank) const;

 private:
  std::vector<int> missing_, arrived_;
};

class PeerLiveness;

class Communicator final : public PeerGroup {
 public:
  // MPI_Init plus the node-local layout (which ranks share this host, and their processes).
  Communicator(int* argc, char*** argv, CommTimeouts timeouts = {});
  ~Communicator();  // finalize() (call abort() instead after PeerLost)
  // MPI_Finalize, once; every rank must call it.
  void finalize();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const { return local_rank_; }  // rank among the processes on this host
  int local_size() const { return local_size_; }
  // The node of each rank (PeerGroup). Until set_nodes(): one node per host, numbered in order
  // of each host's lowest rank.
  int node_of(int rank) const override { return node_of_rank_.at(size_t(rank)); }
  // PeerGroup: read from the peers' process states (same host and PID namespace only).
  std::optional<std::string> peer_not_running() const override;
  // The plan's nodes (the node override splits a host): one entry per rank, the same on every
  // rank. Throws std::invalid_argument on a list of the wrong length or a negative entry.
  void set_nodes(std::vector<int> node_of_rank);
  const std::string& host() const { return host_; }
  // After MPI_Finalize, on the rank that stays last: waits up to `limit_s` for the ranks this
  // process can see (same host and PID namespace) to exit, and names one that is stopped (e.g.
  // SIGSTOP after its last step) longer than the stale time: the launcher would wait for it
  // forever, so the caller exits non-zero and the launcher ends the job.
  std::optional<std::string> peer_stopped_at_exit(double limit_s) const;
  // Where CUDA IPC reaches: the host, and the PID namespace where it is not the initial one
  // (a container per rank): CUDA IPC cannot map memory across PID namespaces.
  std::string ipc_domain() const;
  // Why p2pbench chose MPI's transports for the user (a PID namespace of its own), or "".
  const std::string& transport_note() const { return transport_note_; }
  const CommTimeouts& timeouts() const { return timeouts_; }

  // For tests (tests/mpi/deadline_probe.cpp): called in each exchange, with its `what`, once this
  // rank's messages are posted and before it takes the others' (a rank that stops there leaves
  // its peers holding its message while theirs cannot complete).
  void set_after_sends_posted(std::function<void(const char* what)> hook) { after_sends_posted_ = std::move(hook); }

  // Every rank's bytes, indexed by rank. `timeout_s` (unscaled; default timeouts().step_s) is
  // how long this rank waits for the others after it arrived. Throws PeerLost naming `what`,
  // the missing ranks and why; RuntimeFailure for MPI errors.
  std::vector<std::string> exchange(const std::string& mine, const char* what,
                                    std::optional<double> timeout_s = std::nullopt) const override;

  // Collectives on top of exchange(), with the same deadline and errors (barrier() and
  // broadcast() come from PeerGroup).
  std::vector<std::string> allgather(const std::string& mine, const char* what,
                                     std::optional<double> timeout_s = std::nullopt) const {
    return exchange(mine, what, timeout_s);
  }
  // Logical AND / maximum over all ranks.
  bool all_true(bool mine, const char* what, std::optional<double> timeout_s = std::nullopt) const;
  double max(double mine, const char* what, std::optional<double> timeout_s = std::nullopt) const;

  // Ends every rank of the job now (after a failure that the peers cannot learn of otherwise,
  // or after PeerLost).
  [[noreturn]] void abort(int exit_status) const;

 private:
  // arrived[r]: rank r is through the step (its message here, ours there). Throws PeerLost naming
  // the others where one of them is not running, or once the deadline passed.
  void check_peers(const std::vector<bool>& arrived, const char* what, double waited_s, double deadline_s) const;
  // "rank R (pid P on HOST) <condition>": a peer as every message about its process names it.
  std::string named(int r, const std::string& condition) const;

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
  std::vector<int> node_of_rank_{0};
  CommTimeouts timeouts_;
  void* world_ = nullptr;  // MPI_Comm (a duplicate of MPI_COMM_WORLD), opaque so callers never see mpi.h
  mutable uint64_t steps_ = 0;  // exchanges so far: the message tag, the same on every rank
  std::function<void(const char* what)> after_sends_posted_;
  int tag_limit_ = 32767;
  std::unique_ptr<PeerLiveness> liveness_;
  bool finalized_ = false;
  std::string transport_note_;  // why MPI's transports were chosen for the user, or ""
};

}  // namespace p2pbench
