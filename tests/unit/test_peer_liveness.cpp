// Peer liveness from /proc: only a peer in this process table (same kernel boot, same PID
// namespace) is looked up by pid; any other peer is left to the deadlines, never misjudged.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "comm/peer_liveness.hpp"

namespace p2pbench {
namespace {

std::vector<std::string> fields(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string f; std::getline(in, f, '\t');) out.push_back(f);
  return out;
}

// A description of `pid` as a peer would send it, with the process table of our choice.
std::string peer(long pid, const std::string& table) {
  const auto state = read_process_state(pid);
  return "host-a\t" + std::to_string(pid) + "\t" + std::to_string(state ? state->start_time : 1) + "\t" + table;
}

// A child that stops itself at once; reaped by the caller.
pid_t stopped_child() {
  const pid_t pid = fork();
  if (pid == 0) {
    raise(SIGSTOP);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, WUNTRACED);
  return pid;
}

TEST(PeerLiveness, DescribesItsProcessTable) {
  const auto f = fields(PeerLiveness::describe_self("host-a"));
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[1], std::to_string(getpid()));
  EXPECT_NE(f[3].find("/pid:["), std::string::npos) << f[3];  // boot id, then the PID namespace
}

TEST(PeerLiveness, AStoppedPeerInThisProcessTableIsNamed) {
  const std::string mine = PeerLiveness::describe_self("host-a");
  const std::string table = fields(mine)[3];
  const pid_t child = stopped_child();
  PeerLiveness liveness({mine, peer(child, table)}, 0, 0.0);
  const auto first = liveness.not_running(1);  // the first look starts the stopped clock
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto why = liveness.not_running(1);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(first || why);
  EXPECT_NE((why ? *why : *first).find("is stopped"), std::string::npos);
}

TEST(PeerLiveness, AnExitedPeerInThisProcessTableIsNamed) {
  const std::string mine = PeerLiveness::describe_self("host-a");
  const pid_t child = fork();
  if (child == 0) _exit(0);
  const std::string gone = "host-a\t" + std::to_string(child) + "\t7\t" + fields(mine)[3];
  waitpid(child, nullptr, 0);
  PeerLiveness liveness({mine, gone}, 0, 0.0);
  const auto why = liveness.not_running(1);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("has exited"), std::string::npos) << *why;
}

// A rank that has finished and waits to be reaped by its launcher (a zombie) is exited, never
// stopped: the writer's end-of-run look must let it go.
TEST(PeerLiveness, AFinishedPeerAwaitingItsLauncherHasExited) {
  const std::string mine = PeerLiveness::describe_self("host-a");
  const pid_t child = fork();
  if (child == 0) _exit(0);
  std::optional<ProcessState> state;
  for (int i = 0; i < 500 && (!(state = read_process_state(child)) || state->state != 'Z'); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  PeerLiveness liveness({mine, peer(child, fields(mine)[3])}, 0, 0.0);
  const auto seen = liveness.condition(1);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(state && state->state == 'Z') << "the child never became a zombie";
  EXPECT_EQ(seen.kind, PeerLiveness::Condition::Kind::kExited) << seen.reason;
  EXPECT_NE(seen.reason.find("defunct"), std::string::npos) << seen.reason;
  EXPECT_EQ(liveness.condition(0).kind, PeerLiveness::Condition::Kind::kRunning);
}

// Same host name, another PID namespace (a container per rank): its pid means nothing here.
TEST(PeerLiveness, APeerInAnotherPidNamespaceIsLeftToTheDeadline) {
  const std::string mine = PeerLiveness::describe_self("host-a");
  const pid_t child = stopped_child();
  const std::string boot = fields(mine)[3].substr(0, fields(mine)[3].find('/'));
  PeerLiveness liveness({mine, peer(child, boot + "/pid:[1]"), "host-a\t999999\t7\t" + boot + "/pid:[1]"}, 0, 0.0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(liveness.not_running(1)) << "a stopped pid of another namespace is not the peer";
    EXPECT_FALSE(liveness.not_running(2)) << "a missing pid of another namespace is not an exit";
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST(PeerLiveness, AnUnknownProcessTableIsLeftToTheDeadline) {
  // /proc unreadable where the peer runs (its table ""), or a description without one.
  PeerLiveness liveness({PeerLiveness::describe_self("host-a"), "host-a\t999999\t7\t", "host-a\t999998\t7"}, 0, 0.0);
  EXPECT_FALSE(liveness.not_running(1));
  EXPECT_FALSE(liveness.not_running(2));
}

}  // namespace
}  // namespace p2pbench
