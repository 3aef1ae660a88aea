// Stop signals: the first is recorded for the next lock-step; repeats (a scheduler's SIGTERM,
// SIGCONT, SIGTERM at a time limit; a launcher forwarding its own copy; an impatient Ctrl-C)
// neither end the process nor replace the first, so the stop under way writes its file.
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
              if (stop_signal_received() != 0) return false;
              raise(SIGTERM);
              raise(SIGCONT);
              raise(SIGTERM);
              raise(SIGUSR1);
              return stop_signal_received() == SIGTERM;
            }),
            0)
      << "100 + n: signal n ended the process; 1: the recorded signal was not the first";
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

TEST(StopSignal, ASecondSigintDoesNotEndTheProcessBeforeTheFileIsWritten) {
  EXPECT_EQ(run_in_child([] {
              install_stop_signal_handlers();
              raise(SIGINT);
              raise(SIGINT);
              raise(SIGTERM);
              return stop_signal_received() == SIGINT;
            }),
            0);
}

TEST(StopSignal, NamesTheSignals) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(signal_name(64), "signal 64");
}

}  // namespace
}  // namespace p2pbench
