// GPU tests of issue 13 on one GPU: the HBM stream and the cuBLASLt GEMM give correct results
// alone and beside a concurrent copy; green-context partitions are honoured (every block of a
// probe and of the LD/ST copy kernel launched on the transfer group's stream ran on an SM no
// block of the workload group's stream ran on, and no more SMs than the group holds).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#include "common/cuda_raii.hpp"
#include "engines/gemm_workload.hpp"
#include "engines/hbm_workload.hpp"
#include "kernels/copy_kernels.hpp"
#include "kernels/workload_kernels.hpp"
#include "measure/green_context.hpp"
#include "measure/transfer_timer.hpp"

namespace p2pbench {
namespace {

int device() {
  int d = 0;
  cuda_check(cudaGetDevice(&d), "querying the device");
  return d;
}

int sm_count() {
  int sms = 0;
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device()), "querying the SM count");
  return sms;
}

// Milliseconds of `launches` launches of `enqueue` on `stream` (after one warm-up launch).
template <typename F>
double time_ms(cudaStream_t stream, int launches, F enqueue) {
  Event start = make_event("test start"), stop = make_event("test stop");
  enqueue(stream);
  cuda_check(cudaEventRecord(start.get(), stream), "recording");
  for (int i = 0; i < launches; ++i) enqueue(stream);
  cuda_check(cudaEventRecord(stop.get(), stream), "recording");
  wait_for_event(stop.get(), 120.0, "timed launches");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "reading a time");
  return ms;
}

// Copies `bytes` device to device on `stream` over and over until told to stop: the load
// beside the workload under test. Returns the number of copies made.
class BackgroundCopy {
 public:
  explicit BackgroundCopy(size_t bytes) : src_(bytes, "copy source"), dst_(bytes, "copy destination"), stream_(make_stream("copy")) {}
  void enqueue(int copies) {
    for (int i = 0; i < copies; ++i)
      cuda_check(cudaMemcpyAsync(dst_.get(), src_.get(), src_.size(), cudaMemcpyDeviceToDevice, stream_.get()), "a background copy");
  }
  void finish() { cuda_check(cudaStreamSynchronize(stream_.get()), "finishing the background copies"); }

 private:
  DeviceBuffer src_, dst_;
  Stream stream_;
};

// The SMs the blocks of one probe launch on `stream` ran on.
std::set<unsigned> probe_sms(cudaStream_t stream, int blocks) {
  DeviceBuffer ids(sizeof(unsigned) * size_t(blocks), "probe SM ids");
  kernels::record_block_smids(static_cast<unsigned*>(ids.get()), blocks, 50000, stream);
  std::vector<unsigned> host(static_cast<size_t>(blocks), 0u);
  cuda_check(cudaMemcpyAsync(host.data(), ids.get(), ids.size(), cudaMemcpyDeviceToHost, stream), "reading probe SM ids");
  cuda_check(cudaStreamSynchronize(stream), "waiting for the probe");
  return {host.begin(), host.end()};
}

std::unique_ptr<GreenPartition> partition_or_fail(int k) {
  std::string why_not;
  auto p = GreenPartition::create(device(), k, why_not);
  if (!p && std::getenv("P2PBENCH_ALLOW_NO_GREEN_CONTEXTS") == nullptr)
    ADD_FAILURE() << why_not << " (set P2PBENCH_ALLOW_NO_GREEN_CONTEXTS=1 where that is expected)";
  return p;
}

// First in the file: before cuBLASLt is loaded (a module with dynamic parallelism would let
// green contexts share 2 more SMs on Hopper, as cuda.h says).
TEST(GreenPartition, ProbeAndCopyBlocksStayInTheirGroup) {
  const int sms = sm_count();
  const std::set<unsigned> everywhere = probe_sms(make_stream("unpartitioned probe").get(), 8 * sms);
  std::printf("unpartitioned probe: %zu of %d SMs\n", everywhere.size(), sms);
  ASSERT_GT(everywhere.size(), size_t(sms) / 2) << "the probe cannot tell a partition from the whole GPU";
  DeviceBuffer src(64ull << 20, "copy source"), dst(64ull << 20, "copy destination");
  for (int k : {4, 8, 16, 32, 66}) {
    SCOPED_TRACE("K = " + std::to_string(k));
    auto p = partition_or_fail(k);
    if (!p) continue;
    const SmSplit& split = p->split();
    std::printf("K = %d: transfer group %d SMs, workload group %d SMs of %d (minimum %d, alignment %d)\n", k, split.transfer_sms,
                split.workload_sms, split.device_sms, split.min_partition, split.alignment);
    EXPECT_GE(split.transfer_sms, k);
    EXPECT_LE(split.transfer_sms + split.workload_sms, split.device_sms);
    const std::set<unsigned> transfer = probe_sms(p->transfer_stream(), 8 * sms);
    const std::set<unsigned> workload = probe_sms(p->workload_stream(), 8 * sms);
    EXPECT_LE(transfer.size(), size_t(split.transfer_sms));
    EXPECT_LE(workload.size(), size_t(split.workload_sms));
    for (unsigned id : transfer) EXPECT_EQ(workload.count(id), 0u) << "SM " << id << " ran blocks of both groups";
    // The LD/ST copy kernel's blocks, on the transfer group's stream, record their SMs too.
    const kernels::LdstShape shape{64, 512, 4};
    kernels::ldst_prepare(shape, device());
    DeviceBuffer ids(sizeof(unsigned) * 64, "copy SM ids");
    kernels::ldst_copy(shape, src.get(), dst.get(), src.size(), p->transfer_stream(), static_cast<unsigned*>(ids.get()));
    std::vector<unsigned> copy_ids(64);
    cuda_check(cudaMemcpyAsync(copy_ids.data(), ids.get(), ids.size(), cudaMemcpyDeviceToHost, p->transfer_stream()), "reading");
    cuda_check(cudaStreamSynchronize(p->transfer_stream()), "waiting for the copy");
    const std::set<unsigned> copy_sms(copy_ids.begin(), copy_ids.end());
    EXPECT_LE(copy_sms.size(), size_t(split.transfer_sms));
    for (unsigned id : copy_sms) EXPECT_EQ(workload.count(id), 0u) << "a copy block ran on the workload's SM " << id;
  }
}

TEST(HbmWorkload, CopiesCorrectlyAndCatchesAMissedLaunch) {
  HbmWorkload hbm(256ull << 20, device());
  Stream s = make_stream("test");
  hbm.poison_result(s.get());
  hbm.enqueue(s.get());
  EXPECT_EQ(hbm.check(s.get()), std::nullopt);
  hbm.poison_result(s.get());  // no launch: the check must see the poison
  const auto missed = hbm.check(s.get());
  ASSERT_TRUE(missed.has_value());
  EXPECT_NE(missed->find("differ"), std::string::npos) << *missed;
}

TEST(HbmWorkload, RateAgainstAPlainDeviceToDeviceCopy) {
  const size_t bytes = 4ull << 30;
  HbmWorkload hbm(bytes, device());
  DeviceBuffer a(bytes, "D2D source"), b(bytes, "D2D destination");
  Stream s = make_stream("test");
  const int launches = 10;
  const double hbm_gbps = launches * double(bytes) / (time_ms(s.get(), launches, [&](cudaStream_t st) { hbm.enqueue(st); }) * 1e-3) / 1e9;
  const double copy_gbps = launches * double(bytes) /
                           (time_ms(s.get(), launches, [&](cudaStream_t st) {
                              cuda_check(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, st), "D2D copy");
                            }) * 1e-3) / 1e9;
  std::printf("HBM stream %.1f GB/s, cudaMemcpy D2D %.1f GB/s (bytes copied per second, 1 GB = 1e9 B): %.1f%%\n", hbm_gbps,
              copy_gbps, 100 * hbm_gbps / copy_gbps);
  EXPECT_GT(hbm_gbps, 0.80 * copy_gbps) << "the HBM kernel is far from a plain device copy's rate";
}

// The HBM stream's shapes against a plain device copy: prints one line per shape, the best
// last ("HBM stream shape best: unroll U chunk C KiB blocks/SM B ..."), from which the build's
// default (P2PBENCH_HBM_* in kernels/CMakeLists.txt) is chosen. Every shape must copy correctly.
TEST(HbmWorkload, StreamShapes) {
  const size_t bytes = 4ull << 30;
  DeviceBuffer a(bytes, "stream source"), b(bytes, "stream destination"), counter(sizeof(unsigned long long), "chunk counter");
  Stream s = make_stream("test");
  cuda_check(cudaMemsetAsync(a.get(), 0x5a, bytes, s.get()), "filling the stream source");
  const int launches = 10;
  const double copy_gbps = launches * double(bytes) /
                           (time_ms(s.get(), launches, [&](cudaStream_t st) {
                              cuda_check(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, st), "D2D copy");
                            }) * 1e-3) / 1e9;
  double best = 0;
  kernels::HbmStreamShape best_shape{};
  for (int unroll : {4, 8})
    for (size_t chunk_kib : {256, 1024, 4096, 16384})
      for (int per_sm : {1, 2}) {
        const kernels::HbmStreamShape shape{unroll, chunk_kib << 10, per_sm};
        const int blocks = kernels::hbm_stream_blocks(device(), shape);
        auto* next = static_cast<unsigned long long*>(counter.get());
        cuda_check(cudaMemsetAsync(b.get(), 0, bytes, s.get()), "clearing the stream destination");
        const double gbps = launches * double(bytes) /
                            (time_ms(s.get(), launches, [&](cudaStream_t st) {
                               kernels::hbm_stream(a.get(), b.get(), bytes, blocks, next, st, shape);
                             }) * 1e-3) / 1e9;
        unsigned char last = 0;
        cuda_check(cudaMemcpy(&last, static_cast<char*>(b.get()) + bytes - 1, 1, cudaMemcpyDeviceToHost), "reading back");
        EXPECT_EQ(last, 0x5a) << "shape unroll " << unroll << " chunk " << chunk_kib << " KiB did not copy the last byte";
        std::printf("HBM stream shape unroll %d chunk %zu KiB blocks/SM %d: %.1f GB/s = %.1f%% of cudaMemcpy D2D %.1f GB/s\n",
                    unroll, chunk_kib, per_sm, gbps, 100 * gbps / copy_gbps, copy_gbps);
        if (gbps > best) best = gbps, best_shape = shape;
      }
  std::printf("HBM stream shape best: unroll %d chunk %zu KiB blocks/SM %d: %.1f GB/s = %.1f%% of D2D\n", best_shape.unroll,
              best_shape.chunk_bytes >> 10, best_shape.blocks_per_sm, best, 100 * best / copy_gbps);
}

TEST(GemmWorkload, CorrectAloneAndCatchesAMissedLaunch) {
  GemmWorkload gemm(GemmShape{8192, 8192, 8192}, device());  // the constructor checks against the float64 reference
  std::printf("%s\n", gemm.describe().c_str());
  Stream s = make_stream("test");
  gemm.poison_result(s.get());
  gemm.enqueue(s.get());
  EXPECT_EQ(gemm.check(s.get()), std::nullopt);
  gemm.poison_result(s.get());
  EXPECT_TRUE(gemm.check(s.get()).has_value()) << "a poisoned result passed the check";
  const double ms = time_ms(s.get(), 20, [&](cudaStream_t st) { gemm.enqueue(st); });
  std::printf("GEMM alone: %.1f TFLOP/s (best heuristic candidate when timed: %.1f TFLOP/s)\n", 20 * gemm.work_per_launch() / (ms * 1e-3),
              gemm.best_tflops_when_chosen());
  EXPECT_GT(gemm.best_tflops_when_chosen(), 0.0);
}

TEST(GemmWorkload, OddShapeIsCorrectToo) {
  GemmWorkload gemm(GemmShape{1040, 528, 4112}, device());  // throws if the float64 reference disagrees
  Stream s = make_stream("test");
  gemm.poison_result(s.get());
  gemm.enqueue(s.get());
  EXPECT_EQ(gemm.check(s.get()), std::nullopt);
}

TEST(GemmWorkload, CorrectBesideAConcurrentCopy) {
  GemmWorkload gemm(GemmShape{8192, 8192, 8192}, device());
  BackgroundCopy copy(1ull << 30);
  Stream s = make_stream("test");
  gemm.poison_result(s.get());
  cuda_check(cudaStreamSynchronize(s.get()), "poisoning");
  copy.enqueue(40);
  for (int i = 0; i < 30; ++i) gemm.enqueue(s.get());
  copy.finish();
  EXPECT_EQ(gemm.check(s.get()), std::nullopt);
}

TEST(GreenPartition, GemmInTheWorkloadGroupIsCorrectBesideACopyInTheTransferGroup) {
  auto p = partition_or_fail(16);
  if (!p) return;
  GemmWorkload gemm(GemmShape{8192, 8192, 8192}, device());
  DeviceBuffer src(1ull << 30, "copy source"), dst(1ull << 30, "copy destination");
  const kernels::LdstShape shape{16, 512, 4};
  kernels::ldst_prepare(shape, device());
  gemm.poison_result(p->workload_stream());
  cuda_check(cudaStreamSynchronize(p->workload_stream()), "poisoning");
  for (int i = 0; i < 10; ++i) kernels::ldst_copy(shape, src.get(), dst.get(), src.size(), p->transfer_stream());
  for (int i = 0; i < 20; ++i) gemm.enqueue(p->workload_stream());
  cuda_check(cudaStreamSynchronize(p->transfer_stream()), "finishing the copies");
  EXPECT_EQ(gemm.check(p->workload_stream()), std::nullopt);
}

TEST(GreenPartition, ImpossibleSplitSaysWhy) {
  std::string why_not;
  EXPECT_EQ(GreenPartition::create(device(), sm_count(), why_not), nullptr);
  EXPECT_NE(why_not.find("green contexts unavailable"), std::string::npos) << why_not;
}

}  // namespace
}  // namespace p2pbench
