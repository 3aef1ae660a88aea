#include "comm/peer_liveness.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace p2pbench {

RunningClock::RunningClock(double pause_gap_s) : pause_gap_s_(pause_gap_s), last_(Clock::now()) {}

bool RunningClock::tick() {
  const auto now = Clock::now();
  const double gap = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  if (gap > pause_gap_s_) {
    paused_s_ += gap;
    return true;
  }
  running_s_ += gap;
  return false;
}

std::optional<ProcessState> read_process_state(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  // "pid (command) S ppid ...": the command may hold spaces and parentheses, so the fields
  // are counted from the last ')'. After it: state (field 3) ... start time (field 22).
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  ProcessState s;
  fields >> s.state;
  std::string skip;
  for (int i = 4; i < 22 && fields; ++i) fields >> skip;
  fields >> s.start_time;
  if (!fields) return std::nullopt;
  return s;
}

namespace {

// The first line of a /proc file, or "" where it cannot be read.
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

// Which process table a pid belongs to: the kernel (its boot id) and this process's PID
// namespace. Two containers on one host share a hostname but not this.
std::string process_table_identity() {
  const std::string boot = first_line("/proc/sys/kernel/random/boot_id");
  const std::string ns = pid_namespace();
  if (boot.empty() || ns.empty()) return "";
  return boot + "/" + ns;
}

}  // namespace

std::string pid_namespace() {
  char ns[128] = {0};
  const ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  return n > 0 ? std::string(ns, size_t(n)) : std::string();
}

std::string PeerLiveness::describe_self(const std::string& host) {
  const long pid = long(getpid());
  const auto me = read_process_state(pid);
  return host + "\t" + std::to_string(pid) + "\t" + std::to_string(me ? me->start_time : 0) + "\t" +
         process_table_identity();
}

PeerLiveness::PeerLiveness(const std::vector<std::string>& descriptions, int my_rank, double stale_s)
    : stale_s_(stale_s) {
  for (const std::string& d : descriptions) {
    Peer p;
    std::istringstream in(d);
    std::getline(in, p.host, '\t');
    in >> p.pid >> p.start_time;
    in.ignore(1);  // the tab before the process table's identity
    std::getline(in, p.process_table);
    peers_.push_back(p);
  }
  // Only a peer in this process table can be looked up by its pid; any other (another host,
  // container or PID namespace, or /proc unreadable) is judged by the deadline alone.
  const std::string& mine = peers_.at(size_t(my_rank)).process_table;
  for (Peer& p : peers_) p.local = !mine.empty() && p.process_table == mine && p.pid > 0 && p.start_time > 0;
}

PeerLiveness::Condition PeerLiveness::condition(int rank) {
  using Kind = Condition::Kind;
  Peer& p = peers_.at(size_t(rank));
  if (!p.local) return {};
  const auto state = read_process_state(p.pid);
  if (!state) return {Kind::kExited, "has exited (no process " + std::to_string(p.pid) + ")"};
  // Another start time: the pid was reused after the peer ended.
  if (state->start_time != p.start_time) return {Kind::kExited, "has exited (its pid now names another process)"};
  if (state->state == 'Z' || state->state == 'X') return {Kind::kExited, "has exited (a defunct process)"};
  if (state->state != 'T' && state->state != 't') {
    p.stopped_since.reset();
    return {};
  }
  const auto now = std::chrono::steady_clock::now();
  if (!p.stopped_since) p.stopped_since = now;
  const double stopped_s = std::chrono::duration<double>(now - *p.stopped_since).count();
  if (stopped_s < stale_s_) return {};
  char text[96];
  std::snprintf(text, sizeof text, "is stopped (process state %c, e.g. SIGSTOP) for %.1f s", state->state, stopped_s);
  return {Kind::kStopped, text};
}

std::optional<std::string> PeerLiveness::not_running(int rank) {
  Condition c = condition(rank);
  if (c.kind == Condition::Kind::kRunning) return std::nullopt;
  return std::move(c.reason);
}

void PeerLiveness::forget_history() {
  for (Peer& p : peers_) p.stopped_since.reset();
}

std::string PeerLiveness::where(int rank) const {
  const Peer& p = peers_.at(size_t(rank));
  return "pid " + std::to_string(p.pid) + " on " + p.host;
}

}  // namespace p2pbench
