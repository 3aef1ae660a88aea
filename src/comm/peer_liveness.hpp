// Whether a peer process on this host is still running, read from its process state: a rank
// stopped by SIGSTOP (or a paused container), or one that has exited, is recognised in
// seconds instead of at a step's deadline. Peers in another process table (another host,
// another container or PID namespace on this host) are "unknown": only the deadline applies.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace p2pbench {

// Counts the seconds this process was running. A gap between two ticks longer than
// `pause_gap_s` means this process (or the whole job: Slurm suspend, a paused container) was
// stopped: that time is not charged to the peers.
class RunningClock {
 public:
  explicit RunningClock(double pause_gap_s = 1.0);
  // Returns true when the gap since the last tick was a pause of this process.
  bool tick();
  double running_s() const { return running_s_; }
  double paused_s() const { return paused_s_; }

 private:
  using Clock = std::chrono::steady_clock;
  double pause_gap_s_;
  Clock::time_point last_;
  double running_s_ = 0, paused_s_ = 0;
};

class PeerLiveness {
 public:
  // "host\tpid\tstart-time\tprocess-table" of this process, for exchange at start-up; the
  // process table is the boot id and PID namespace, empty where /proc does not tell.
  static std::string describe_self(const std::string& host);
  // `descriptions`: every rank's describe_self(), by rank. `stale_s`: how long a peer must be
  // seen stopped, continuously, before it is reported.
  PeerLiveness(const std::vector<std::string>& descriptions, int my_rank, double stale_s);

  // What one look at `rank`'s process says: running (or not to be judged from here), exited,
  // or stopped for at least the stale time, with the words for a message. One read of its
  // state, so a peer that exits between two looks is never taken for one that failed.
  struct Condition {
    enum class Kind { kRunning, kExited, kStopped } kind = Kind::kRunning;
    std::string reason;  // "has exited (...)", "is stopped (...) for 5.0 s"; empty while running
  };
  Condition condition(int rank);
  // Why `rank` is not running (exited or stopped), or nullopt while it runs or cannot be
  // judged. Call repeatedly while waiting; `forget_history` after a pause of this process
  // (what was seen before it says nothing about the peer now).
  std::optional<std::string> not_running(int rank);
  void forget_history();
  // Where `rank` runs, for messages: "pid 1234 on node-a".
  std::string where(int rank) const;
  // Whether `rank`'s process can be seen from here (same process table).
  bool observable(int rank) const { return peers_.at(size_t(rank)).local; }

 private:
  struct Peer {
    std::string host;
    long pid = 0;
    unsigned long long start_time = 0;
    std::string process_table;  // boot id and PID namespace; "" when unknown
    bool local = false;
    std::optional<std::chrono::steady_clock::time_point> stopped_since;
  };
  std::vector<Peer> peers_;
  double stale_s_;
};

// The state letter and start time (clock ticks since boot) of process `pid`, from
// /proc/<pid>/stat; nullopt when there is no such process.
struct ProcessState {
  char state = '?';
  unsigned long long start_time = 0;
};
std::optional<ProcessState> read_process_state(long pid);

// This process's PID namespace as /proc names it ("pid:[4026531836]"), or "" where it cannot tell.
std::string pid_namespace();

}  // namespace p2pbench
