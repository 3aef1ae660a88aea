// The watchdog's own expiry path: the owner's action runs with a message naming the region, then
// the process ends with status 1; time the process spent stopped is not counted. The end
// deadline that bounds a process's exit. And the running-time deadline of the host's polls for
// GPU work, which does not count a pause either.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/end_deadline.hpp"
#include "common/running_deadline.hpp"
#include "common/stop_signal.hpp"
#include "common/watchdog.hpp"

namespace p2pbench {
namespace {

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "/p2pbench-watchdog-" + std::to_string(getpid()) + "-" + name;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// Forks a child that guards a region of `guard_s` and stays in it for `stay_s`; the expiry action
// writes its message to `message_path`. Returns the child's pid.
pid_t guarded_child(double guard_s, double stay_s, const std::string& message_path) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  Watchdog dog([&](const std::string& message) { std::ofstream(message_path) << message; });
  {
    Watchdog::Scope guard(&dog, guard_s, "a region guarded for the test");
    sleep_s(stay_s);
  }
  _exit(0);
}

int exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(Watchdog, ARegionThatOverstaysEndsTheProcessAfterTheOwnersAction) {
  const std::string path = temp_path("expired");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(exit_status(guarded_child(0.3, 30.0, path)), 1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_EQ(read_text(path), "a region guarded for the test did not finish in time: ending the process (watchdog)");
  std::remove(path.c_str());
}

TEST(Watchdog, ARegionThatEndsInTimeLeavesTheProcessAlone) {
  const std::string path = temp_path("in-time");
  EXPECT_EQ(exit_status(guarded_child(2.0, 0.1, path)), 0);
  EXPECT_EQ(read_text(path), "");
}

// A whole job paused (SIGSTOP, Slurm suspend) spends no running time: 3 s stopped inside a region
// guarded for 1 s of running time is no expiry.
TEST(Watchdog, TimeSpentStoppedIsNotCounted) {
  const std::string path = temp_path("paused");
  const pid_t child = guarded_child(1.0, 0.6, path);
  sleep_s(0.1);
  kill(child, SIGSTOP);
  sleep_s(3.0);
  kill(child, SIGCONT);
  EXPECT_EQ(exit_status(child), 0) << read_text(path);
  std::remove(path.c_str());
}

// Forks a child that watches stop signals with `grace_s`, receives SIGTERM and then waits
// `stay_s` outside any guarded region (as a rank resumed inside a long GPU wait would).
pid_t stopped_child(double grace_s, double stay_s, const std::string& message_path) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  install_stop_signal_handlers();
  Watchdog dog([&](const std::string& message) { std::ofstream(message_path) << message; }, grace_s);
  raise(SIGTERM);
  sleep_s(stay_s);
  _exit(0);
}

TEST(Watchdog, AStopSignalEndsTheProcessWithinTheGrace) {
  const std::string path = temp_path("stop-grace");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(exit_status(stopped_child(1.0, 30.0, path)), 128 + SIGTERM);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_EQ(read_text(path).rfind("SIGTERM arrived 1 s ago and the run has not ended (between guarded steps)", 0), 0u)
      << read_text(path);
  std::remove(path.c_str());
}

TEST(Watchdog, AStopThatEndsWithinTheGraceKeepsItsOwnEnd) {
  const std::string path = temp_path("stop-in-time");
  EXPECT_EQ(exit_status(stopped_child(3.0, 0.3, path)), 0);
  EXPECT_EQ(read_text(path), "");
}

// The last deadline of a process (after its results are written): it ends the process with the
// status it was given when what is left (exit handlers, MPI_Finalize) does not finish.
TEST(EndDeadline, EndsAProcessThatDoesNotFinishWithTheGivenStatus) {
  const pid_t child = fork();
  if (child == 0) {
    arm_end_deadline(0.3, 7, 3, "the test's end");
    sleep_s(30.0);
    _exit(0);
  }
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(exit_status(child), 7);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(EndDeadline, AProcessThatEndsInTimeKeepsItsStatus) {
  const pid_t child = fork();
  if (child == 0) {
    arm_end_deadline(5.0, 7, 3, "the test's end");
    _exit(0);
  }
  EXPECT_EQ(exit_status(child), 0);
}

TEST(RunningDeadline, APollGivesUpAfterItsRunningTime) {
  RunningDeadline deadline(0.2);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(poll_until([] { return false; }, [](bool ready) { return !ready; }, deadline));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(took, 0.2);
  EXPECT_LT(took, 2.0);
  EXPECT_TRUE(deadline.passed());
  EXPECT_EQ(deadline.left_s(), 0.0);
}

TEST(RunningDeadline, APollEndsWithTheAnswer) {
  RunningDeadline deadline(30.0);
  int asked = 0;
  EXPECT_EQ(poll_until([&] { return ++asked; }, [](int n) { return n < 5; }, deadline), 5);
  EXPECT_FALSE(deadline.passed());
  EXPECT_GT(deadline.left_s(), 29.0);
}

// A job suspended as a whole inside a wait for GPU work: 2.5 s stopped in a poll of 1 s running
// time, and the work (here a file) arrives 0.2 s after the job resumed. The poll must see it.
TEST(RunningDeadline, TimeSpentStoppedIsNotCounted) {
  const std::string path = temp_path("poll-paused");
  std::remove(path.c_str());
  const pid_t child = fork();
  if (child == 0) {
    RunningDeadline deadline(1.0);
    const bool arrived = poll_until([&] { return std::ifstream(path).good(); }, [](bool ready) { return !ready; },
                                    deadline, std::chrono::microseconds(1000));
    _exit(arrived ? 0 : 3);
  }
  sleep_s(0.2);
  kill(child, SIGSTOP);
  sleep_s(2.5);
  kill(child, SIGCONT);
  sleep_s(0.2);
  std::ofstream(path) << "done";
  EXPECT_EQ(exit_status(child), 0) << "the poll counted the time its process was stopped";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace p2pbench
