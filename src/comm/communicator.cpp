#include "comm/communicator.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "comm/peer_liveness.hpp"
#include "common/end_deadline.hpp"

namespace p2pbench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kAbortS = 20.0;  // how long MPI_Abort may take to end this process

void mpi_check(int rc, const std::string& what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw RuntimeFailure("MPI failed while " + what + ": " + std::string(text, size_t(len)));
}

MPI_Comm& as_comm(void* p) { return *static_cast<MPI_Comm*>(p); }

// One peer's side of an exchange, probed and received without blocking: its message to us, and
// ours to it. A peer is through when both are done: a large message to a peer that stopped
// (SIGSTOP) after sending its own never completes, and that peer is the one to name and to ask
// the liveness check about (seen on two H200: the wait ran to its deadline naming nobody).
struct PeerExchange {
  bool done = false;
  bool receiving = false;
  MPI_Request request = MPI_REQUEST_NULL;
  std::string bytes;
  MPI_Request send = MPI_REQUEST_NULL;
  bool sent = true;
  bool through() const { return done && sent; }

  // One look at both messages (never blocks).
  void poll(int peer, int tag, MPI_Comm comm, const std::string& step) {
    int flag = 0;
    if (!done && !receiving) {
      MPI_Message message;
      MPI_Status status;
      mpi_check(MPI_Improbe(peer, tag, comm, &flag, &message, &status), "probing for a message " + step);
      if (flag) {
        int count = 0;
        mpi_check(MPI_Get_count(&status, MPI_BYTE, &count), "sizing a message " + step);
        bytes.resize(size_t(count));
        mpi_check(MPI_Imrecv(bytes.data(), count, MPI_BYTE, &message, &request), "receiving " + step);
        receiving = true;
      }
    }
    if (!done && receiving) {
      mpi_check(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), "receiving " + step);
      done = flag != 0;
    }
    if (!sent) {
      mpi_check(MPI_Test(&send, &flag, MPI_STATUS_IGNORE), "sending " + step);
      sent = flag != 0;
    }
  }
};

// Polls gently: spins for the first ~200 us (a step usually completes within microseconds),
// then sleeps, backing off to 1 ms, so a long wait costs no CPU.
class Backoff {
 public:
  void pause() {
    if (++polls_ < 2000) return;
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
    sleep_us_ = std::min(sleep_us_ * 2, 1000);
  }

 private:
  int polls_ = 0;
  int sleep_us_ = 20;
};

std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

// The initial PID namespace has this inode on every Linux kernel (PROC_PID_INIT_INO).
constexpr const char* kInitialPidNamespace = "pid:[4026531836]";

// This process's PID namespace when it is not the initial one (a container), else "".
std::string own_pid_namespace() {
  const std::string ns = pid_namespace();
  return ns == kInitialPidNamespace ? "" : ns;
}

// Open MPI's shared-memory transport (vader) assumes that the ranks of a host share a PID
// namespace: between ranks in namespaces of their own (a container per rank on the host
// network) it crashed in MPI_Comm_dup (SIGSEGV in mca_btl_vader_sendi, Open MPI 4.1). Inside a
// PID namespace, and unless the user chose the transports, the ranks' few small messages go
// over TCP instead. Returns a note for the console, or "".
std::string avoid_shared_memory_across_pid_namespaces() {
  if (std::getenv("OMPI_MCA_btl") != nullptr || own_pid_namespace().empty()) return "";
  setenv("OMPI_MCA_btl", "self,tcp", 0);
  return "this process runs in a PID namespace of its own (a container): MPI's messages go over TCP "
         "(OMPI_MCA_btl=self,tcp), as Open MPI's shared-memory transport crashes between ranks in different PID "
         "namespaces on one host; set OMPI_MCA_btl to choose otherwise";
}

}  // namespace

bool PeerLost::missing(int rank) const { return std::find(missing_.begin(), missing_.end(), rank) != missing_.end(); }

Communicator::Communicator(int* argc, char*** argv, CommTimeouts timeouts) : timeouts_(timeouts) {
  transport_note_ = avoid_shared_memory_across_pid_namespaces();
  int provided = 0;
  mpi_check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "initialising MPI");
  // Return codes instead of aborting, so every failure is reported with what was being done.
  mpi_check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "setting the MPI error handler");
  mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "reading the MPI rank");
  mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "reading the MPI job size");
  // A private duplicate: our tags can never match a message of anything else in the process.
  auto* world = new MPI_Comm;
  mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, world), "duplicating the world communicator");
  world_ = world;
  mpi_check(MPI_Comm_set_errhandler(*world, MPI_ERRORS_RETURN), "setting the MPI error handler");
  void* tag_ub = nullptr;
  int found = 0;
  mpi_check(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found), "reading the largest MPI tag");
  if (found && tag_ub) tag_limit_ = std::max(1, std::min(*static_cast<int*>(tag_ub), 1 << 20));
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  mpi_check(MPI_Get_processor_name(name, &len), "reading the host name");
  host_.assign(name, size_t(len));

  // Who runs where: the node-local rank, and each process's identity for liveness checks.
  std::vector<std::string> all;
  try {
    all = exchange(PeerLiveness::describe_self(host_), "describing the ranks' processes");
  } catch (const PeerLost& e) {  // no rank got far enough to keep anything: just end the job
    std::fprintf(stderr, "p2pbench: error: %s\n", e.what());
    abort(kExitFailure);
  }
  liveness_ = std::make_unique<PeerLiveness>(all, rank_, timeouts_.stale_s * timeouts_.scale);
  local_rank_ = local_size_ = 0;
  std::vector<std::string> hosts;  // one node per host until set_nodes()
  node_of_rank_.clear();
  for (int r = 0; r < size_; ++r) {
    const std::string host = all[size_t(r)].substr(0, all[size_t(r)].find('\t'));
    const auto known = std::find(hosts.begin(), hosts.end(), host);
    node_of_rank_.push_back(int(known - hosts.begin()));
    if (known == hosts.end()) hosts.push_back(host);
    if (host != host_) continue;
    if (r < rank_) ++local_rank_;
    ++local_size_;
  }
}

std::optional<std::string> Communicator::peer_stopped_at_exit(double limit_s) const {
  if (!liveness_) return std::nullopt;
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
  RunningClock clock;
  while (Clock::now() < deadline) {
    bool waiting = false;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_ || !liveness_->observable(r)) continue;
      const auto peer = liveness_->condition(r);
      if (peer.kind == PeerLiveness::Condition::Kind::kExited) continue;  // done, as it should be
      if (peer.kind == PeerLiveness::Condition::Kind::kStopped)
        return named(r, peer.reason);
      waiting = true;  // running (ending) or stopped for less than the stale time
    }
    if (!waiting) return std::nullopt;
    if (clock.tick()) liveness_->forget_history();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

std::string Communicator::named(int r, const std::string& condition) const {
  return "rank " + std::to_string(r) + " (" + liveness_->where(r) + ") " + condition;
}

std::optional<std::string> Communicator::peer_not_running() const {
  if (!liveness_) return std::nullopt;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || !liveness_->observable(r)) continue;
    if (auto reason = liveness_->not_running(r)) return named(r, *reason);
  }
  return std::nullopt;
}

std::string Communicator::ipc_domain() const {
  const std::string ns = own_pid_namespace();
  return ns.empty() ? host_ : host_ + " (PID namespace " + ns + ")";
}

void Communicator::set_nodes(std::vector<int> node_of_rank) {
  if (node_of_rank.size() != size_t(size_))
    throw std::invalid_argument("the node list has " + std::to_string(node_of_rank.size()) + " entries for " +
                                std::to_string(size_) + " ranks");
  for (int n : node_of_rank)
    if (n < 0) throw std::invalid_argument("the node list has a negative node index " + std::to_string(n));
  node_of_rank_ = std::move(node_of_rank);
}

Communicator::~Communicator() { finalize(); }

void Communicator::finalize() {
  if (finalized_) return;
  finalized_ = true;
  if (world_) {
    MPI_Comm_free(&as_comm(world_));
    delete &as_comm(world_);
    world_ = nullptr;
  }
  MPI_Finalize();
}

std::vector<std::string> Communicator::exchange(const std::string& mine, const char* what,
                                                std::optional<double> timeout_s) const {
  MPI_Comm comm = as_comm(world_);
  const int tag = int(steps_++ % uint64_t(tag_limit_));
  const std::string step = std::string("while ") + what;
  std::vector<PeerExchange> in(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    in[size_t(r)].sent = false;
    mpi_check(MPI_Isend(mine.data(), int(mine.size()), MPI_BYTE, r, tag, comm, &in[size_t(r)].send), "sending " + step);
  }
  in[size_t(rank_)].done = true;
  in[size_t(rank_)].bytes = mine;
  if (after_sends_posted_) after_sends_posted_(what);
  const double deadline_s = timeout_s.value_or(timeouts_.step_s) * timeouts_.scale;
  RunningClock clock;
  Backoff backoff;
  auto last_check = Clock::now();
  while (true) {
    bool all_through = true;
    for (int r = 0; r < size_; ++r) {
      in[size_t(r)].poll(r, tag, comm, step);
      all_through = all_through && in[size_t(r)].through();
    }
    if (all_through) break;
    // liveness_ is made from the first exchange's answers, so that exchange runs without it.
    if (clock.tick() && liveness_) liveness_->forget_history();
    if (Clock::now() - last_check > std::chrono::milliseconds(100)) {
      last_check = Clock::now();
      std::vector<bool> arrived;
      for (const PeerExchange& p : in) arrived.push_back(p.through());
      check_peers(arrived, what, clock.running_s(), deadline_s);
    }
    backoff.pause();
  }
  std::vector<std::string> out;
  for (PeerExchange& p : in) out.push_back(std::move(p.bytes));
  return out;
}

void Communicator::check_peers(const std::vector<bool>& arrived, const char* what, double waited_s,
                               double deadline_s) const {
  std::vector<int> missing, present;
  std::string why;
  for (int r = 0; r < size_; ++r) {
    if (arrived[size_t(r)]) {
      present.push_back(r);
      continue;
    }
    missing.push_back(r);
    if (!liveness_) continue;
    if (auto reason = liveness_->not_running(r); reason && why.empty())
      why = named(r, *reason);
  }
  if (why.empty() && waited_s <= deadline_s) return;
  char waited[64];
  std::snprintf(waited, sizeof waited, "%.1f s", waited_s);
  if (why.empty())
    why = "rank" + std::string(missing.size() > 1 ? "s " : " ") + rank_list(missing) + " did not arrive within the deadline of " +
          std::to_string(int(deadline_s + 0.5)) + " s (alive but not progressing, or on another host; --timeout-scale "
                                                   "stretches the deadline)";
  throw PeerLost("rank " + std::to_string(rank_) + " waited " + waited + " for rank" + (missing.size() > 1 ? "s " : " ") +
                     rank_list(missing) + " while " + what + ": " + why,
                 missing, present);
}

bool Communicator::all_true(bool mine, const char* what, std::optional<double> timeout_s) const {
  const auto all = exchange(mine ? "1" : "0", what, timeout_s);
  return std::all_of(all.begin(), all.end(), [](const std::string& v) { return v == "1"; });
}

double Communicator::max(double mine, const char* what, std::optional<double> timeout_s) const {
  std::string bytes(sizeof mine, '\0');
  std::memcpy(bytes.data(), &mine, sizeof mine);
  double out = mine;
  for (const std::string& b : exchange(bytes, what, timeout_s)) {
    double v = 0;
    if (b.size() != sizeof v) throw RuntimeFailure(std::string("a malformed value arrived while ") + what);
    std::memcpy(&v, b.data(), sizeof v);
    out = std::max(out, v);
  }
  return out;
}

void Communicator::abort(int exit_status) const {
  std::fflush(stdout);
  std::fflush(stderr);
  // MPI_Abort asks the launcher to end every rank and may wait on it: a deadline like any wait.
  arm_end_deadline(kAbortS * timeouts_.scale, exit_status, rank_, "MPI_Abort");
  MPI_Abort(MPI_COMM_WORLD, exit_status);
  std::_Exit(exit_status);
}

}  // namespace p2pbench
