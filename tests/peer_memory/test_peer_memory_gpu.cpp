// The vmm and fabric allocators in one process on one GPU: an allocation is exported, imported
// back into the same process (pidfd_getfd on one's own pid is always allowed) and mapped at a
// second address; bytes written through either mapping are read through the other, by the copy
// engine and by a kernel (cudaMemset). fabric passes the same way, or is waived where the node
// has no IMEX channel or the GPU no fabric handles: the reason a run would then give.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "device/peer_memory.hpp"

namespace p2pbench {
namespace {

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// Not a multiple of any granularity: the allocation is rounded up, the buffer keeps its size.
constexpr size_t kBytes = (3u << 20) + 5;

void expect_ok(cudaError_t e, const char* what) { ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e); }

// Writes through `a`, reads through `b`, and the other way, with a copy and with a kernel.
void check_both_ways(void* a, void* b, size_t bytes) {
  std::vector<unsigned char> pattern(bytes), back(bytes);
  for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<unsigned char>((i * 131 + 7) & 0xff);
  expect_ok(cudaMemcpy(a, pattern.data(), bytes, cudaMemcpyHostToDevice), "writing through the first mapping");
  expect_ok(cudaMemcpy(back.data(), b, bytes, cudaMemcpyDeviceToHost), "reading through the second mapping");
  EXPECT_EQ(back, pattern) << "the second mapping does not show the first one's bytes";
  expect_ok(cudaMemset(b, 0x5a, bytes), "a kernel writing through the second mapping");
  expect_ok(cudaDeviceSynchronize(), "waiting for the kernel");
  expect_ok(cudaMemcpy(back.data(), a, bytes, cudaMemcpyDeviceToHost), "reading through the first mapping");
  EXPECT_EQ(back, std::vector<unsigned char>(bytes, 0x5a));
  // Device to device across the two mappings (the copy engine reads one, writes the other).
  expect_ok(cudaMemcpy(a, pattern.data(), bytes, cudaMemcpyHostToDevice), "rewriting the pattern");
  expect_ok(cudaMemcpy(static_cast<char*>(b) + bytes / 2, a, bytes / 2, cudaMemcpyDeviceToDevice),
            "copying between the mappings");
  expect_ok(cudaMemcpy(back.data(), a, bytes, cudaMemcpyDeviceToHost), "reading the result");
  for (size_t i = 0; i < bytes / 2; ++i)
    if (back[bytes / 2 + i] != pattern[i]) {
      ADD_FAILURE() << "byte " << bytes / 2 + i << " after the device-to-device copy";
      break;
    }
}

// Exports, maps again here, checks, then releases in the teardown order: the mapping, then the
// own allocation.
void round_trip(const PeerMemory& memory) {
  std::unique_ptr<DeviceMemory> own = memory.allocate(kBytes, "the test buffer", true);
  ASSERT_NE(own->get(), nullptr);
  EXPECT_EQ(own->size(), kBytes);
  ASSERT_EQ(own->handle().size(), memory.handle_size());
  const uint64_t allocated = round_up_to_granularity(kBytes, memory.granularity());
  if (memory.kind() == Allocator::kVmm) {
    const FdHandle h = unpack_fd_handle(own->handle());
    EXPECT_EQ(h.pid, int32_t(getpid()));
    EXPECT_GE(h.fd, 0);
    EXPECT_EQ(h.bytes, allocated);
  } else {
    EXPECT_EQ(unpack_fabric_handle(own->handle()).bytes, allocated);
  }
  std::unique_ptr<DeviceMemory> mapped = memory.map_peer(own->handle(), "the test buffer, mapped again");
  ASSERT_NE(mapped->get(), nullptr);
  EXPECT_NE(mapped->get(), own->get()) << "a second mapping has an address of its own";
  check_both_ways(own->get(), mapped->get(), kBytes);
  mapped.reset();
  expect_ok(cudaDeviceSynchronize(), "after unmapping the second mapping");
  own.reset();
  expect_ok(cudaGetLastError(), "after freeing the allocation");
}

class PeerMemoryGpu : public ::testing::Test {
 protected:
  void SetUp() override { expect_ok(cudaSetDevice(0), "selecting GPU 0"); }
};

TEST_F(PeerMemoryGpu, VmmMemoryTravelsAsAFileDescriptor) {
  const std::unique_ptr<PeerMemory> memory = make_peer_memory(Allocator::kVmm, 0);  // every Hopper GPU has VMM
  EXPECT_GT(memory->granularity(), 0u);
  EXPECT_EQ(memory->granularity() % 4096, 0u);
  round_trip(*memory);
}

TEST_F(PeerMemoryGpu, FabricMemoryTravelsAsBytesOrIsWaivedWithoutImex) {
  std::unique_ptr<PeerMemory> memory;
  try {
    memory = make_peer_memory(Allocator::kFabric, 0);
    memory->allocate(1, "a probe", true);  // cuMemCreate is where a node without IMEX says so
  } catch (const PeerMemoryUnavailable& e) {
    const std::string why = e.what();
    if (has(why, "fabric handles: cuMemCreate: CUDA_ERROR_NOT_PERMITTED: no IMEX channel (") ||
        has(why, "(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 0)"))
      GTEST_SKIP() << "missing service: an IMEX channel; waived as a run gives it: " << why;
    FAIL() << why;
  }
  round_trip(*memory);
}

TEST_F(PeerMemoryGpu, AHandleOfAClosedDescriptorIsRefusedNamingTheCall) {
  const std::unique_ptr<PeerMemory> memory = make_peer_memory(Allocator::kVmm, 0);
  const std::string stale = pack_fd_handle({int32_t(getpid()), 1 << 20, memory->granularity()});
  try {
    memory->map_peer(stale, "the source buffer of rank 1");
    FAIL() << "mapped a descriptor that is not open";
  } catch (const PeerMemoryUnavailable& e) {
    EXPECT_TRUE(has(e.what(), "vmm handles: pidfd_getfd(pid ")) << e.what();
    EXPECT_TRUE(has(e.what(), "(mapping the source buffer of rank 1)")) << e.what();
  }
}

TEST_F(PeerMemoryGpu, PlainMemoryHasNoHandle) {
  const std::unique_ptr<DeviceMemory> plain = plain_device_memory(4096, "a fallback buffer");
  EXPECT_NE(plain->get(), nullptr);
  EXPECT_TRUE(plain->handle().empty());
  const std::unique_ptr<PeerMemory> memory = make_peer_memory(Allocator::kVmm, 0);
  EXPECT_TRUE(memory->allocate(4096, "an unexported buffer", false)->handle().empty());
}

}  // namespace
}  // namespace p2pbench
