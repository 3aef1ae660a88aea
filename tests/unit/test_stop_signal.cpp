// Stop signals: the first is recorded; repeated ones (a scheduler and a launcher both
// signalling) neither kill the process nor replace the first.
#include <gtest/gtest.h>
#include <signal.h>

#include "child_process.hpp"
#include "common/stop_signal.hpp"

namespace p2pbench {
namespace {

TEST(StopSignal, RepeatedSignalsDoNotKillAndTheFirstIsKept) {
  const int status = testing::run_in_child([] {
    install_stop_signal_handlers();
    if (stop_signal_received() != 0) return false;
    for (int i = 0; i < 3; ++i) raise(SIGTERM);
    raise(SIGINT);
    raise(SIGUSR1);
    return stop_signal_received() == SIGTERM;
  });
  EXPECT_EQ(status, 0) << "100 + n: signal n ended the process; 1: the recorded signal was not the first";
}

TEST(StopSignal, NamesTheSignals) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(signal_name(64), "signal 64");
}

}  // namespace
}  // namespace p2pbench
