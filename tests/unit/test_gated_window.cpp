// A gated window's figures from its stamps, the gate's give-up, and the windows of one gate read
// as one (measure/gated_window.hpp). No GPU: only what the host computes from the stamps.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "kernels/gate_kernels.hpp"
#include "measure/gated_window.hpp"

namespace p2pbench {
namespace {

// %globaltimer stamps are absolute nanoseconds (about 1.7e18 on a running node): the window is
// their difference, taken before the doubles lose the last bits (their spacing there is 256 ns).
TEST(GatedWindowFigures, WindowIsTheExactDifferenceOfLargeStamps) {
  const uint64_t release = 1'700'000'000'000'000'123ull;
  const kernels::GateStamps stamps{release, release + 777, 0, 0};
  const WindowFigures f = window_figures(stamps, 3.25);
  EXPECT_EQ(f.window_ns, 777.0);
  EXPECT_EQ(f.elapsed_ms, 3.25);
  EXPECT_EQ(f.release_ns, double(release));
  EXPECT_EQ(f.end_ns, double(release + 777));
}

TEST(GatedWindowFigures, GaveUpGateNamesTheWindowAndItsTimeout) {
  const kernels::GateStamps open{10, 20, 0, 0}, gave_up{0, 0, 1, 0};
  EXPECT_NO_THROW(throw_if_gate_gave_up(open, 0.2, "sample 3 of a case"));
  try {
    throw_if_gate_gave_up(gave_up, 0.2, "sample 3 of a case");
    ADD_FAILURE() << "a gate that gave up was taken as open";
  } catch (const RuntimeFailure& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the start gate of sample 3 of a case never opened within 0.2"), std::string::npos) << what;
  }
}

// Each figure is the longest over the windows, whichever window it comes from; the span runs from
// the earliest release to the latest end.
TEST(GatedWindowFigures, WindowsOfOneGateReadAsOne) {
  const WindowFigures a{2.0, 5000, 100, 5100}, b{3.0, 4000, 50, 4050};
  const WindowFigures f = longest_of({a, b});
  EXPECT_EQ(f.elapsed_ms, 3.0);
  EXPECT_EQ(f.window_ns, 5000.0);
  EXPECT_EQ(f.release_ns, 50.0);
  EXPECT_EQ(f.end_ns, 5100.0);
  const WindowFigures one = longest_of({b});
  EXPECT_EQ(one.release_ns, 50.0);
  EXPECT_EQ(one.end_ns, 4050.0);
  const WindowFigures none = longest_of({});
  EXPECT_EQ(none.elapsed_ms, 0.0);
  EXPECT_EQ(none.window_ns, 0.0);
  EXPECT_EQ(none.release_ns, 0.0);
}

}  // namespace
}  // namespace p2pbench
