// GPU tests of the pause-aware wait clock (kernels/live_clock.cuh) through the start-gate kernel:
// a gate that never opens times out after its timeout while the host heartbeat moves, and never
// while it stands still (the whole job paused), however long that lasts. And the host's wait for
// GPU work (wait_for_event and the waits on a stream, behind every engine's waits) gives up at its
// deadline.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"
#include "common/host_heartbeat.hpp"
#include "kernels/gate_kernels.hpp"

namespace p2pbench::kernels {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kTimeoutNs = 300'000'000;

struct GateUnderTest {
  MappedHostBuffer gate{sizeof(uint32_t), "the test's gate word"};
  MappedHostBuffer beat{sizeof(uint64_t), "the test's heartbeat word"};
  MappedHostBuffer stamps{sizeof(GateStamps), "the test's gate stamps"};
  Stream stream = make_stream("the test's stream");

  GateUnderTest() {
    *static_cast<uint32_t*>(gate.host()) = 0;
    *static_cast<uint64_t*>(beat.host()) = 1;
    *static_cast<GateStamps*>(stamps.host()) = {};
  }
  void enqueue(const uint64_t* heartbeat) {
    enqueue_gate_wait(static_cast<const uint32_t*>(gate.device()), 1, kTimeoutNs, heartbeat,
                      static_cast<GateStamps*>(stamps.device()), stream.get());
  }
  bool done() const {
    const cudaError_t e = cudaStreamQuery(stream.get());
    if (e != cudaErrorNotReady) cuda_check(e, "querying the gate's stream");
    return e == cudaSuccess;
  }
  // Seconds until the kernel ends, advancing the heartbeat every 5 ms when `beating`.
  double seconds_to_end(bool beating, double limit_s) {
    const auto t0 = Clock::now();
    auto* word = static_cast<uint64_t*>(beat.host());
    while (!done()) {
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (s > limit_s) return s;
      if (beating) __atomic_fetch_add(word, uint64_t(1), __ATOMIC_RELEASE);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
  bool timed_out() const { return static_cast<const GateStamps*>(stamps.host())->timed_out != 0; }
};

// The shut gate holds the stream for its whole timeout (300 ms of plain GPU time): a 50 ms wait
// gives up saying what it waited for, a long one sees the work end.
void expect_give_up_then_the_end(GateUnderTest& g, const std::function<void(double, const std::string&)>& wait) {
  const auto t0 = Clock::now();
  try {
    wait(0.05, "a shut gate");
    ADD_FAILURE() << "the wait returned while the gate was shut";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("waiting for a shut gate"), std::string::npos) << e.what();
  }
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GE(waited, 0.05);
  EXPECT_LT(waited, 0.25);
  wait(10.0, "the gate's timeout");
  EXPECT_TRUE(g.timed_out());
}

TEST(LiveClock, WaitForEventGivesUpAtItsDeadline) {
  GateUnderTest g;
  g.enqueue(nullptr);
  Event after = make_untimed_event("the test's event after the gate");
  cuda_check(cudaEventRecord(after.get(), g.stream.get()), "recording the test's event");
  expect_give_up_then_the_end(g, [&](double s, const std::string& what) { wait_for_event(after.get(), s, what); });
}

// The same for a wait on a stream (set-up, fills, checks).
TEST(LiveClock, WaitForStreamGivesUpAtItsDeadline) {
  GateUnderTest g;
  g.enqueue(nullptr);
  expect_give_up_then_the_end(g, [&](double s, const std::string& what) { wait_for_stream(g.stream.get(), s, what); });
}

TEST(LiveClock, GateTimesOutWhileTheHostBeats) {
  GateUnderTest g;
  g.enqueue(static_cast<const uint64_t*>(g.beat.device()));
  const double s = g.seconds_to_end(true, 10.0);
  EXPECT_TRUE(g.done());
  EXPECT_TRUE(g.timed_out());
  EXPECT_GE(s, 0.25);
  EXPECT_LT(s, 3.0);
}

TEST(LiveClock, PausedHostDoesNotSpendTheTimeout) {
  GateUnderTest g;
  g.enqueue(static_cast<const uint64_t*>(g.beat.device()));
  // Five timeouts with the heartbeat still: the wait counts at most LiveClock::kStaleNs of it.
  const double paused = g.seconds_to_end(false, 1.5);
  EXPECT_FALSE(g.done()) << "the gate wait timed out after " << paused << " s of a paused host";
  // The host resumes: the rest of the timeout runs out.
  const double resumed = g.seconds_to_end(true, 10.0);
  EXPECT_TRUE(g.done());
  EXPECT_TRUE(g.timed_out());
  EXPECT_LT(resumed, 3.0);
}

TEST(LiveClock, WithoutAHeartbeatEveryNanosecondCounts) {
  GateUnderTest g;
  g.enqueue(nullptr);
  const double s = g.seconds_to_end(false, 10.0);
  EXPECT_TRUE(g.timed_out());
  EXPECT_LT(s, 3.0);
}

TEST(LiveClock, ProcessHeartbeatKeepsTheClockRunning) {
  GateUnderTest g;
  HostHeartbeat heartbeat;
  g.enqueue(heartbeat.device_word());
  const double s = g.seconds_to_end(false, 10.0);
  EXPECT_TRUE(g.timed_out());
  EXPECT_GE(s, 0.25);
  EXPECT_LT(s, 3.0);
}

TEST(LiveClock, OpenGateEndsTheWaitAtOnce) {
  GateUnderTest g;
  g.enqueue(static_cast<const uint64_t*>(g.beat.device()));
  __atomic_store_n(static_cast<uint32_t*>(g.gate.host()), uint32_t(1), __ATOMIC_RELEASE);
  const double s = g.seconds_to_end(true, 10.0);
  EXPECT_FALSE(g.timed_out());
  EXPECT_LT(s, 0.25);
}

// A wait that ends within LiveClock::kCheckEveryNs never reads the heartbeat (a latency probe's
// round trips must not pay a host-memory read each). The word given is one no kernel may read:
// a read would end the launch with an illegal address. Last in the file, since that error
// would spoil the process's context for the tests after it.
TEST(LiveClock, ShortWaitNeverReadsTheHeartbeat) {
  GateUnderTest g;
  __atomic_store_n(static_cast<uint32_t*>(g.gate.host()), uint32_t(1), __ATOMIC_RELEASE);
  const auto* unreadable = reinterpret_cast<const uint64_t*>(uintptr_t(8));
  g.enqueue(unreadable);
  cuda_check(cudaStreamSynchronize(g.stream.get()), "waiting for a gate that was open before the wait");
  EXPECT_FALSE(g.timed_out());
}

}  // namespace
}  // namespace p2pbench::kernels
