// The start gate and the shared host memory reserve their pages up front: with no room (here a
// file-size limit, which tmpfs applies to fallocate just as a full /dev/shm refuses it) they
// fail with a message naming the object and the reason, in the call that creates them, instead
// of a SIGBUS at the first touch. No GPU is needed: registration with the device is separate.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <stdexcept>
#include <string>

#include "child_process.hpp"
#include "common/errors.hpp"
#include "engines/shared_host_memory.hpp"
#include "device/shared_gate.hpp"

namespace p2pbench {
namespace {

// Runs `body` in a child with RLIMIT_FSIZE = `limit` and SIGXFSZ ignored; returns its status.
int with_file_size_limit(rlim_t limit, const std::function<bool()>& body) {
  return testing::run_in_child(body, [limit] {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit l{limit, limit};
    return setrlimit(RLIMIT_FSIZE, &l) == 0;
  });
}

bool fails_with(const std::function<void()>& call, const std::string& a, const std::string& b) {
  try {
    call();
  } catch (const RuntimeFailure& e) {
    const std::string what = e.what();
    return what.find(a) != std::string::npos && what.find(b) != std::string::npos;
  }
  return false;
}

TEST(SharedMemory, CreatedWhenThereIsRoom) {
  SharedGate gate = SharedGate::create();
  EXPECT_EQ(gate.current(), 0u);
  SharedHostMemory mem = SharedHostMemory::create(1 << 20, "the staging area");
  EXPECT_GE(mem.size(), size_t(1) << 20);
}

TEST(SharedMemory, StartGateFailsClearlyWithoutRoom) {
  EXPECT_EQ(with_file_size_limit(0, [] { return fails_with([] { SharedGate::create(); }, "start gate", "File too large"); }),
            0);
}

TEST(SharedMemory, StagingAreaFailsClearlyWithoutRoom) {
  EXPECT_EQ(with_file_size_limit(1 << 20,
                                 [] {
                                   return fails_with([] { SharedHostMemory::create(64 << 20, "the staging area"); },
                                                     "the staging area", "File too large");
                                 }),
            0);
}

// A step that throws after queueing behind the gate still opens it: the GPU that queued must not
// spin until its timeout.
TEST(SharedMemory, GateOpensWhenTheStepThatQueuedThrows) {
  SharedGate gate = SharedGate::create();
  const uint32_t ticket = gate.next_ticket();
  try {
    GateRelease opens(gate, ticket);
    throw std::runtime_error("a peer was lost while queueing");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(gate.current(), ticket);
  { GateRelease idle(gate, 0); }
  EXPECT_EQ(gate.current(), ticket);
}

}  // namespace
}  // namespace p2pbench
