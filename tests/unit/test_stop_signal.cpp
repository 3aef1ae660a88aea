// Stop signals: the first is recorded for the next lock-step; a second Ctrl-C ends the process,
// but a scheduler's repeated SIGTERM (Slurm sends SIGTERM, SIGCONT, SIGTERM) or SIGUSR1 must not.
#include <gtest/gtest.h>
#include <signal.h>

#include "child_process.hpp"
#include "common/stop_signal.hpp"

namespace p2pbench {
namespace {

using testing::run_in_child;

TEST(StopSignal, RepeatedSigtermIsRecordedOnceAndDoesNotEndTheProcess) {
  EXPECT_EQ(run_in_child([] {
              install_stop_signal_handlers();
              raise(SIGTERM);
              raise(SIGCONT);
              raise(SIGTERM);
              raise(SIGUSR1);
              return stop_signal_received() == SIGTERM;
            }),
            0);
}

TEST(StopSignal, RepeatedSigusr1DoesNotEndTheProcess) {
  EXPECT_EQ(run_in_child([] {
              install_stop_signal_handlers();
              raise(SIGUSR1);
              raise(SIGUSR1);
              return stop_signal_received() == SIGUSR1;
            }),
            0);
}

TEST(StopSignal, ASecondSigintEndsTheProcess) {
  EXPECT_EQ(run_in_child([] {
              install_stop_signal_handlers();
              raise(SIGINT);
              if (stop_signal_received() != SIGINT) return false;
              raise(SIGINT);
              return false;  // not reached: the second Ctrl-C ends the process
            }),
            100 + SIGINT);
}

}  // namespace
}  // namespace p2pbench
