// Each host memory kind on GPU 0 (local NUMA placement): the buffer is made as a host-link case
// makes it, a device-to-host and a host-to-device copy run through HostLinkEngine's launch, and
// every byte is checked twice: by the engine's own verification (kernels, or the staging path
// for pageable memory) and by the CPU against the device source. A poisoned, uncopied buffer
// must fail the engine's check (the check can fail). Prints what the host gave each kind.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "common/cuda_raii.hpp"
#include "device/host_memory.hpp"
#include "engines/host_link_engine.hpp"
#include "kernels/pattern_kernels.hpp"

namespace p2pbench {
namespace {

// Not a multiple of the 64 MiB staging chunk: the pageable checks' last chunk is partial.
constexpr size_t kBytes = (96u << 20) + 4096;
constexpr uint64_t kSeed = 0x1234abcdull;

void expect_ok(cudaError_t e, const char* what) { ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e); }

class HostMemoryKinds : public testing::TestWithParam<HostMemoryKind> {};

TEST_P(HostMemoryKinds, CopiesBothWaysAndVerifiesEveryByte) {
  const HostMemoryKind kind = GetParam();
  expect_ok(cudaSetDevice(0), "selecting GPU 0");
  const DevicePlacement where = host_placement_for(0, NumaPlacement::kLocal);
  ASSERT_TRUE(where.placement) << where.skip;
  HostMemory host(kind, kBytes, *where.placement, "the test's host buffer");
  std::printf("%-10s pages %-12s numa_node %d (asked for node %d, bound: %s)\n", to_string(kind), host.pages().c_str(),
              host.numa_node().value_or(-1), where.placement->node, where.placement->bind ? "yes" : "no");
  EXPECT_TRUE(host.pages() == "4KiB" || host.pages() == "thp" || host.pages() == "hugetlb_2MiB") << host.pages();
  if (!where.placement->bind) {
    EXPECT_EQ(host.numa_node(), where.placement->node);  // one node: it is there
  }
  EXPECT_EQ(host.device_accessible(), kind != HostMemoryKind::kPageable);

  Stream stream = make_stream("the test's stream");
  DeviceBuffer source(kBytes, "the device source"), destination(kBytes, "the device destination");
  Endpoints e;
  e.local_src = source.get();
  e.local_dst = destination.get();
  e.host = host.device();
  e.host_memory = &host;
  e.flow = {0, 0};

  // Device to host: poison the host buffer, then check that the poison fails the check.
  HostLinkEngine d2h(HostLinkEngine::kDeviceToHost, kind, NumaPlacement::kLocal);
  EXPECT_EQ(d2h.feeding() == Feeding::kHostDriven, kind == HostMemoryKind::kPageable);
  d2h.fill_source(d2h.source_region(e), kBytes, kSeed, stream.get());
  d2h.poison_destination(d2h.destination_region(e), kBytes, kSeed, stream.get());
  expect_ok(cudaStreamSynchronize(stream.get()), "filling and poisoning");
  EXPECT_TRUE(d2h.verify(d2h.destination_region(e), kBytes, kSeed, 0, stream.get())) << "poison passed the check";
  d2h.launch(d2h.transfer(Direction::kPush, e, 0, kBytes), stream.get());
  expect_ok(cudaStreamSynchronize(stream.get()), "the device-to-host copy");
  const auto d2h_bad = d2h.verify(d2h.destination_region(e), kBytes, kSeed, 0, stream.get());
  EXPECT_FALSE(d2h_bad) << *d2h_bad;
  std::vector<unsigned char> expected(kBytes);
  expect_ok(cudaMemcpy(expected.data(), source.get(), kBytes, cudaMemcpyDeviceToHost), "reading the source back");
  EXPECT_EQ(std::memcmp(expected.data(), host.host(), kBytes), 0) << "the host buffer differs from the device source";

  // Host to device: a fresh pattern in the host buffer, poison on the device, copy, check.
  HostLinkEngine h2d(HostLinkEngine::kHostToDevice, kind, NumaPlacement::kLocal);
  h2d.fill_source(h2d.source_region(e), kBytes, kSeed + 1, stream.get());
  h2d.poison_destination(h2d.destination_region(e), kBytes, kSeed + 1, stream.get());
  expect_ok(cudaStreamSynchronize(stream.get()), "filling and poisoning");
  EXPECT_TRUE(h2d.verify(h2d.destination_region(e), kBytes, kSeed + 1, 0, stream.get())) << "poison passed the check";
  h2d.launch(h2d.transfer(Direction::kPush, e, 0, kBytes), stream.get());
  expect_ok(cudaStreamSynchronize(stream.get()), "the host-to-device copy");
  const auto h2d_bad = h2d.verify(h2d.destination_region(e), kBytes, kSeed + 1, 0, stream.get());
  EXPECT_FALSE(h2d_bad) << *h2d_bad;
  std::vector<unsigned char> arrived(kBytes);
  expect_ok(cudaMemcpy(arrived.data(), destination.get(), kBytes, cudaMemcpyDeviceToHost), "reading the copy back");
  EXPECT_EQ(std::memcmp(arrived.data(), host.host(), kBytes), 0) << "the device copy differs from the host buffer";
}

INSTANTIATE_TEST_SUITE_P(EveryKind, HostMemoryKinds,
                         testing::Values(HostMemoryKind::kPinned, HostMemoryKind::kRegistered,
                                         HostMemoryKind::kHugePages, HostMemoryKind::kPageable),
                         [](const testing::TestParamInfo<HostMemoryKind>& info) { return std::string(to_string(info.param)); });

// Remote placement on this host: a node to bind to where it has several, else the skip a run
// gives ("this node has one NUMA node (node N)").
TEST(HostMemoryPlacement, RemoteIsANodeOrTheOneNodeSkip) {
  const DevicePlacement remote = host_placement_for(0, NumaPlacement::kRemote);
  if (remote.placement) {
    std::printf("remote placement: node %d\n", remote.placement->node);
    HostMemory host(HostMemoryKind::kRegistered, 4u << 20, *remote.placement, "a remote buffer");
    EXPECT_EQ(host.numa_node(), remote.placement->node);
  } else {
    std::printf("remote placement skipped: %s\n", remote.skip.c_str());
    EXPECT_NE(remote.skip.find("this node has one NUMA node"), std::string::npos) << remote.skip;
  }
}

}  // namespace
}  // namespace p2pbench
