// The grids of captured launches (common/captured_kernels.hpp), on one GPU: a kernel of known
// launch shape reads back as launched, a capture runs nothing, and the GEMM workload records the
// grid of cuBLASLt's chosen kernel (whole GPU and a green-context partition), says it in its
// description, and still gives the right result after the capture.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/captured_kernels.hpp"
#include "common/cuda_raii.hpp"
#include "device/green_context.hpp"
#include "kernels/workload_kernels.hpp"
#include "workloads/gemm_workload.hpp"

namespace p2pbench {
namespace {

// The partition probe launches `blocks` blocks of one warp each (kernels/workload_kernels.hpp).
TEST(CapturedKernels, KnownLaunchShapeReadsBack) {
  constexpr int kBlocks = 7;
  DeviceBuffer ids(sizeof(unsigned) * kBlocks, "probe SM ids");
  Stream s = make_stream("test");
  const auto kernels = captured_kernels(
      s.get(), [&] { kernels::record_block_smids(static_cast<unsigned*>(ids.get()), kBlocks, 0, s.get()); }, "a probe");
  ASSERT_EQ(kernels.size(), 1u);
  const CapturedKernel& k = kernels[0];
  EXPECT_EQ(k.grid.x, unsigned(kBlocks));
  EXPECT_EQ(k.grid.y * k.grid.z, 1u);
  EXPECT_EQ(k.threads_per_block(), 32u);
  EXPECT_EQ(k.dynamic_shared_bytes, 0u);
  EXPECT_EQ(total_blocks(kernels), uint64_t(kBlocks));
  std::string why_not;
  const std::optional<int> resident = resident_blocks_per_sm(k, why_not);
  ASSERT_TRUE(resident.has_value()) << why_not;
  EXPECT_GT(*resident, 0);
}

// Memsets are nodes too, but not kernels; and the captured work never runs.
TEST(CapturedKernels, OnlyKernelsAndNothingRuns) {
  constexpr int kBlocks = 4;
  DeviceBuffer ids(sizeof(unsigned) * kBlocks, "probe SM ids");
  Stream s = make_stream("test");
  cuda_check(cudaMemsetAsync(ids.get(), 0xAB, ids.size(), s.get()), "filling the ids with a sentinel");
  const auto memset_only = captured_kernels(
      s.get(), [&] { cuda_check(cudaMemsetAsync(ids.get(), 0, ids.size(), s.get()), "a captured memset"); }, "a memset");
  EXPECT_TRUE(memset_only.empty());
  const auto probe = captured_kernels(
      s.get(), [&] { kernels::record_block_smids(static_cast<unsigned*>(ids.get()), kBlocks, 0, s.get()); }, "a probe");
  EXPECT_EQ(probe.size(), 1u);
  std::vector<unsigned> host(kBlocks, 0);
  cuda_check(cudaMemcpyAsync(host.data(), ids.get(), ids.size(), cudaMemcpyDeviceToHost, s.get()), "reading the ids");
  cuda_check(cudaStreamSynchronize(s.get()), "reading the ids");
  for (unsigned id : host) EXPECT_EQ(id, 0xABABABABu) << "a captured launch ran";
}

// The grid recorded for a choice: non-empty, real blocks and threads, in describe(); the same
// grid as a capture of the workload's launch on another stream; and the GEMM right after it.
void expect_grid_described(const GemmWorkload& gemm, int sms, const std::string& choice) {
  EXPECT_EQ(gemm.grid_unread(), "");
  ASSERT_FALSE(gemm.grid().empty()) << gemm.describe();
  for (const GemmWorkload::KernelGrid& g : gemm.grid()) {
    EXPECT_GT(g.kernel.blocks(), 0u);
    EXPECT_GT(g.kernel.threads_per_block(), 0u);
    EXPECT_LE(g.kernel.threads_per_block(), 1024u);
    if (!g.resident_per_sm) std::printf("resident blocks per SM unknown: %s\n", g.resident_unknown.c_str());
  }
  const CapturedKernel& first = gemm.grid().front().kernel;
  const std::string text = gemm.describe();
  std::printf("%s\n", text.c_str());
  const std::string grid = "; grid " + std::to_string(first.blocks()) + " blocks of " +
                           std::to_string(first.threads_per_block()) + " threads";
  const size_t at = text.find(choice + ": algorithm");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find(grid, at), std::string::npos) << text;
  EXPECT_NE(text.find("per SM of " + std::to_string(sms), at), std::string::npos) << text;
}

TEST(GemmGrid, WholeGpuChoiceReadFromACaptureAndDescribed) {
  const int sms = sm_count(current_device());
  GemmWorkload gemm(GemmShape{2048, 2048, 2048}, current_device());  // chooses, captures, then checks a launch
  expect_grid_described(gemm, sms, "whole GPU");
  Stream s = make_stream("test");
  const auto again = captured_kernels(s.get(), [&] { gemm.enqueue(s.get()); }, "the GEMM again");
  ASSERT_EQ(again.size(), gemm.grid().size());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].blocks(), gemm.grid()[i].kernel.blocks());
    EXPECT_EQ(again[i].threads_per_block(), gemm.grid()[i].kernel.threads_per_block());
  }
  gemm.poison_result(s.get());
  gemm.enqueue(s.get());
  EXPECT_EQ(gemm.check(s.get()), std::nullopt);
}

// A partition's choice is read on the workload group's (green context's) stream, against its SMs.
TEST(GemmGrid, PartitionChoiceReadOnItsGreenStream) {
  std::string why_not;
  auto p = GreenPartition::create(current_device(), 16, why_not);
  if (!p) {
    if (std::getenv("P2PBENCH_ALLOW_NO_GREEN_CONTEXTS") == nullptr)
      ADD_FAILURE() << why_not << " (set P2PBENCH_ALLOW_NO_GREEN_CONTEXTS=1 where that is expected)";
    return;
  }
  GemmWorkload gemm(GemmShape{2048, 2048, 2048}, current_device());
  const int sms = p->split().workload_sms;
  gemm.set_sm_target(sms, p->workload_stream());
  expect_grid_described(gemm, sms, std::to_string(sms) + " SMs");
  gemm.poison_result(p->workload_stream());
  gemm.enqueue(p->workload_stream());
  EXPECT_EQ(gemm.check(p->workload_stream()), std::nullopt);
}

}  // namespace
}  // namespace p2pbench
