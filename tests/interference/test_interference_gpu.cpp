// Interference GPU tests on one GPU: the HBM stream and the cuBLASLt GEMM give correct results
// alone and beside a concurrent copy; green-context partitions are honoured (every block of a
// probe and of the LD/ST copy kernel launched on the transfer group's stream ran on an SM no
// block of the workload group's stream ran on, and no more SMs than the group holds); the host's
// waits for a start gate that does not open (a phase's window, a queued or host-driven sample of
// the case loop's timer) end by the gate's timeout or by their own deadline, whichever is first.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "workloads/gemm_workload.hpp"
#include "workloads/hbm_workload.hpp"
#include "kernels/copy_kernels.hpp"
#include "kernels/pattern_kernels.hpp"
#include "kernels/workload_kernels.hpp"
#include "device/green_context.hpp"
#include "device/shared_gate.hpp"
#include "measure/gated_window.hpp"
#include "measure/interference_phase.hpp"
#include "measure/transfer_timer.hpp"

namespace p2pbench {
namespace {

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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A source with the HBM workload's kind of pattern and a destination, for timing HBM streams and
// plain device copies of `bytes` on one stream, and checking the streams' copies.
class HbmBench {
 public:
  explicit HbmBench(size_t bytes)
      : bytes_(bytes),
        src_(bytes, "stream source"),
        dst_(bytes, "stream destination"),
        counter_(sizeof(unsigned long long), "chunk counter"),
        check_(sizeof(kernels::PatternCheck), "stream check"),
        stream_(make_stream("test")) {
    kernels::fill_pattern(src_.get(), bytes_, kSeed, 0, stream_.get());
  }

  bool fits(const kernels::HbmStreamShape& shape, std::string* why_not = nullptr) const {
    try {
      kernels::hbm_stream_blocks(current_device(), shape);
      return true;
    } catch (const InputError& e) {
      if (why_not) *why_not = e.what();
      return false;
    }
  }

  // GB/s (bytes copied) of 10 launches of `enqueue` after one warm-up launch.
  template <typename F>
  double rate(F enqueue) {
    return 10 * double(bytes_) / (time_ms(stream_.get(), 10, enqueue) * 1e-3) / 1e9;
  }

  double copy_rate() {
    return rate([&](cudaStream_t st) {
      cuda_check(cudaMemcpyAsync(dst_.get(), src_.get(), bytes_, cudaMemcpyDeviceToDevice, st), "D2D copy");
    });
  }

  // GB/s of `launches` launches of the stream in `shape` (after a warm-up launch) into a
  // poisoned destination, whose every byte is then checked against the source's pattern.
  // `blocks_factor` times the blocks that fit (plus one if above 1: a ragged last wave).
  // `before`, if given, runs after the poison and before the first launch.
  double rate_and_check(const kernels::HbmStreamShape& shape, int launches, int blocks_factor = 1,
                        const std::function<void(cudaStream_t)>& before = {}) {
    const int blocks = blocks_factor * kernels::hbm_stream_blocks(current_device(), shape) + (blocks_factor > 1 ? 1 : 0);
    auto* next = static_cast<unsigned long long*>(counter_.get());
    kernels::fill_poison(dst_.get(), bytes_, kSeed, 0, stream_.get());
    if (before) before(stream_.get());
    const double ms = time_ms(stream_.get(), launches, [&](cudaStream_t st) {
      kernels::hbm_stream(src_.get(), dst_.get(), bytes_, blocks, next, st, shape);
    });
    auto* result = static_cast<kernels::PatternCheck*>(check_.host());
    *result = {0, ~0ull};
    kernels::check_pattern(dst_.get(), bytes_, kSeed, 0, static_cast<kernels::PatternCheck*>(check_.device()), stream_.get());
    cuda_check(cudaStreamSynchronize(stream_.get()), "checking the stream's copy");
    EXPECT_EQ(result->mismatches, 0u) << "first bad offset " << result->first_bad_offset;
    return launches * double(bytes_) / (ms * 1e-3) / 1e9;
  }

 private:
  static constexpr uint64_t kSeed = 0x5a5aull;
  size_t bytes_;
  DeviceBuffer src_, dst_, counter_;
  MappedHostBuffer check_;
  Stream stream_;
};

// Every kernel the HBM stream has (layout x hints x unroll x blocks per SM), each counter
// layout with each of its chunk sizes (KiB); grid_stride once (its chunk is unused).
std::vector<kernels::HbmStreamShape> all_kernels(const std::vector<size_t>& block_chunk_kib,
                                                 const std::vector<size_t>& warp_chunk_kib) {
  using kernels::HbmLayout;
  const std::vector<std::pair<HbmLayout, std::vector<size_t>>> layouts{
      {HbmLayout::block_chunks, block_chunk_kib}, {HbmLayout::warp_chunks, warp_chunk_kib}, {HbmLayout::grid_stride, {256}}};
  std::vector<kernels::HbmStreamShape> shapes;
  for (const auto& [layout, chunks] : layouts)
    for (auto hints : {kernels::HbmHints::none, kernels::HbmHints::streaming, kernels::HbmHints::evict_first,
                       kernels::HbmHints::prefetch})
      for (int unroll : {2, 4, 8})
        for (size_t kib : chunks)
          for (int per_sm : {1, 2}) shapes.push_back({unroll, kib << 10, per_sm, hints, layout});
  return shapes;
}

bool same_shape(const kernels::HbmStreamShape& a, const kernels::HbmStreamShape& b) {
  return kernels::describe(a) == kernels::describe(b);
}

struct ShapeRate {
  kernels::HbmStreamShape shape;
  double gbps;
};

// Times the 8 fastest shapes of the sweep (and the fastest with a chunk counter, if none of them
// has one) and the build's default 3 more times, interleaved (with the copy between rounds), and
// prints each one's median and the best.
void confirm_fastest(HbmBench& bench, std::vector<ShapeRate> rates, double sweep_copy_gbps) {
  std::sort(rates.begin(), rates.end(), [](const ShapeRate& a, const ShapeRate& b) { return a.gbps > b.gbps; });
  std::vector<kernels::HbmStreamShape> finalists;
  const auto counted = [](const kernels::HbmStreamShape& s) { return s.layout != kernels::HbmLayout::grid_stride; };
  for (size_t i = 0; i < rates.size() && i < 8; ++i) finalists.push_back(rates[i].shape);
  if (std::none_of(finalists.begin(), finalists.end(), counted)) {  // the fastest with a chunk counter, too
    const auto it = std::find_if(rates.begin(), rates.end(), [&](const ShapeRate& r) { return counted(r.shape); });
    if (it != rates.end()) finalists.push_back(it->shape);
  }
  const auto build_default = kernels::default_hbm_stream_shape();
  if (std::none_of(finalists.begin(), finalists.end(), [&](const auto& s) { return same_shape(s, build_default); }))
    finalists.push_back(build_default);
  std::vector<std::vector<double>> runs(finalists.size());
  std::vector<double> copy_gbps;
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < finalists.size(); ++i) runs[i].push_back(bench.rate_and_check(finalists[i], 10));
    copy_gbps.push_back(bench.copy_rate());
  }
  const double copy = median(copy_gbps);
  std::printf("HBM stream D2D reference (confirmation): median %.1f GB/s of 3 (the sweep's: %.1f GB/s)\n", copy, sweep_copy_gbps);
  int best = -1, best_any = -1;
  for (size_t i = 0; i < finalists.size(); ++i) {
    const double m = median(runs[i]);
    std::printf("HBM stream shape confirm: %s: median %.1f GB/s of 3 = %.1f%% of D2D%s\n", kernels::describe(finalists[i]).c_str(), m,
                100 * m / copy, same_shape(finalists[i], build_default) ? " (the build's default)" : "");
    if (best_any < 0 || m > median(runs[best_any])) best_any = int(i);
    if (counted(finalists[i]) && (best < 0 || m > median(runs[best]))) best = int(i);
  }
  const auto print_best = [&](const char* what, int i) {
    std::printf("HBM stream shape %s: %s: %.1f GB/s = %.1f%% of D2D\n", what, kernels::describe(finalists[i]).c_str(),
                median(runs[i]), 100 * median(runs[i]) / copy);
  };
  if (best_any != best) print_best("best of any layout (reference)", best_any);
  ASSERT_GE(best, 0) << "no shape with a chunk counter among the fastest";
  print_best("best", best);
}

std::unique_ptr<GreenPartition> partition_or_fail(int k) {
  std::string why_not;
  auto p = GreenPartition::create(current_device(), k, why_not);
  if (!p && std::getenv("P2PBENCH_ALLOW_NO_GREEN_CONTEXTS") == nullptr)
    ADD_FAILURE() << why_not << " (set P2PBENCH_ALLOW_NO_GREEN_CONTEXTS=1 where that is expected)";
  return p;
}

// First in the file: before cuBLASLt is loaded (a module with dynamic parallelism would let
// green contexts share 2 more SMs on Hopper, as cuda.h says).
TEST(GreenPartition, ProbeAndCopyBlocksStayInTheirGroup) {
  const int sms = sm_count(current_device());
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
    kernels::ldst_prepare(shape, current_device());
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
  HbmWorkload hbm(256ull << 20, current_device());
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
  HbmWorkload hbm(bytes, current_device());
  std::printf("%s\n", hbm.describe().c_str());
  HbmBench bench(bytes);
  // Alternating rounds, medians: the copy's rate alone has been seen to move by 10% between runs.
  // The same kernel also runs on the copy's own buffers, the comparison on the same memory (where
  // the memory lies made no difference on an H200: 2104-2108 GB/s over 16 placements on each GPU).
  std::vector<double> hbm_gbps, same_memory_gbps, copy_gbps;
  for (int round = 0; round < 3; ++round) {
    hbm_gbps.push_back(bench.rate([&](cudaStream_t st) { hbm.enqueue(st); }));
    same_memory_gbps.push_back(bench.rate_and_check(kernels::default_hbm_stream_shape(), 10));
    copy_gbps.push_back(bench.copy_rate());
  }
  const double h = median(hbm_gbps), same = median(same_memory_gbps), c = median(copy_gbps);
  std::printf("HBM stream %.1f GB/s, cudaMemcpy D2D %.1f GB/s (medians of 3; bytes copied per second, 1 GB = 1e9 B): %.1f%%\n", h,
              c, 100 * h / c);
  std::printf("HBM stream on the copy's own buffers %.1f GB/s: %.1f%% of the copy on the same memory\n", same, 100 * same / c);
  EXPECT_GT(h, 0.80 * c) << "the HBM kernel is far from a plain device copy's rate";
}

// What ran just before the stream, as a finding (printed, not a target): the stream right after
// the poison of its own destination, a TMA copy, a device-to-device cudaMemcpy and an LD/ST copy
// (each 64 MiB, more than the L2), with no L2 settle and with settles of 0.5, 1 (the default)
// and 1.25 L2 sizes (HbmStreamShape::l2_settle). 3 interleaved rounds, medians; every stream's
// copy is checked. Seen on an H200 without the settle: 2105 GB/s after the poison, 2028 after the rest.
TEST(HbmWorkload, RateRightAfterOtherWork) {
  const kernels::TmaShape tma{sm_count(current_device()), size_t(192) << 10, 4};
  if (auto why = kernels::tma_unsupported_reason(tma, current_device())) GTEST_SKIP() << *why;
  kernels::tma_prepare(tma, current_device());
  const kernels::LdstShape ldst{32, 512, 4};
  kernels::ldst_prepare(ldst, current_device());
  DeviceBuffer a(size_t(64) << 20, "source of the work before"), b(size_t(64) << 20, "destination of the work before");
  using Enqueue = std::function<void(cudaStream_t)>;
  const std::vector<std::pair<std::string, Enqueue>> befores{
      {"the poison of its destination", {}},
      {"a TMA copy", [&](cudaStream_t st) { kernels::tma_copy(tma, a.get(), b.get(), a.size(), st); }},
      {"a D2D cudaMemcpy",
       [&](cudaStream_t st) {
         cuda_check(cudaMemcpyAsync(b.get(), a.get(), a.size(), cudaMemcpyDeviceToDevice, st), "a copy before the stream");
       }},
      {"an LD/ST copy", [&](cudaStream_t st) { kernels::ldst_copy(ldst, a.get(), b.get(), a.size(), st); }},
  };
  HbmBench bench(4ull << 30);
  for (double settle : {0.0, 0.5, 1.0, 1.25}) {
    kernels::HbmStreamShape shape = kernels::default_hbm_stream_shape();
    shape.l2_settle = settle;
    std::vector<std::vector<double>> rates(befores.size());
    for (int round = 0; round < 3; ++round)
      for (size_t i = 0; i < befores.size(); ++i) rates[i].push_back(bench.rate_and_check(shape, 10, 1, befores[i].second));
    for (size_t i = 0; i < befores.size(); ++i)
      std::printf("HBM stream after other work: L2 settle %g: right after %s: %.1f GB/s\n", settle, befores[i].first.c_str(),
                  median(rates[i]));
  }
}

TEST(HbmStreamShape, NamesRoundTripAndBadShapesAreRefused) {
  for (auto hints : {kernels::HbmHints::none, kernels::HbmHints::streaming, kernels::HbmHints::evict_first,
                     kernels::HbmHints::prefetch})
    EXPECT_EQ(kernels::parse_hbm_hints(kernels::hbm_hints_name(hints), "hints"), hints);
  for (auto layout : {kernels::HbmLayout::block_chunks, kernels::HbmLayout::warp_chunks, kernels::HbmLayout::grid_stride})
    EXPECT_EQ(kernels::parse_hbm_layout(kernels::hbm_layout_name(layout), "layout"), layout);
  EXPECT_THROW(kernels::parse_hbm_hints("evict-first", "P2PBENCH_HBM_HINTS"), InputError);
  EXPECT_THROW(kernels::parse_hbm_layout("chunks", "P2PBENCH_HBM_LAYOUT"), InputError);
  const kernels::HbmStreamShape shape{4, 256 << 10, 2, kernels::HbmHints::streaming, kernels::HbmLayout::warp_chunks};
  EXPECT_EQ(kernels::describe(shape), "layout warp_chunks hints streaming unroll 4 chunk 256 KiB blocks/SM 2");
  EXPECT_THROW(kernels::hbm_stream_blocks(current_device(), {3, 256 << 10, 1}), InputError);
  EXPECT_THROW(kernels::hbm_stream_blocks(current_device(), {4, 100, 1}), InputError);
  EXPECT_THROW(kernels::hbm_stream_blocks(current_device(), {4, 256 << 10, 3}), InputError);
  EXPECT_EQ(kernels::hbm_stream_blocks(current_device(), {2, 256 << 10, 2}, 10), 20);
  kernels::HbmStreamShape no_settle{2, 256 << 10, 1};
  no_settle.l2_settle = -1;
  EXPECT_THROW(kernels::hbm_stream_blocks(current_device(), no_settle), InputError);
  no_settle.l2_settle = 0;
  EXPECT_EQ(kernels::describe(no_settle), "layout block_chunks hints none unroll 2 chunk 256 KiB blocks/SM 1 L2 settle 0");
}

// Every kernel of every layout and hint set copies a size that is no multiple of its step or
// chunk exactly, so the remainder paths run too, with a grid of more than 3 waves of blocks (as
// when a partition or a transfer holds SMs): late blocks find no chunk left, or, in
// grid_stride, take their own share.
TEST(HbmStreamShape, EveryKernelCopiesAnOddSizeExactly) {
  const size_t bytes = (37ull << 20) + 7 * 16;
  HbmBench bench(bytes);
  int checked = 0;
  const auto shapes = all_kernels({64}, {16});
  for (const auto& shape : shapes)
    if (bench.fits(shape)) {
      SCOPED_TRACE(kernels::describe(shape));
      bench.rate_and_check(shape, 1, 3);
      ++checked;
    }
  std::printf("%d of %zu kernels fit and copied exactly\n", checked, shapes.size());
  EXPECT_GE(checked, int(shapes.size()) / 2) << "fewer than half the kernels fit 1 or 2 blocks of 1024 threads per SM";
}

// The HBM stream's shapes against a plain device copy (scripts/hbm-shape-check.sh runs this and
// makes a table of it). Every shape's output is checked byte for byte. The copy's rate is
// measured every 24 shapes; shapes are compared with the median. Then the 8 fastest and the
// build's default are timed 3 times more, interleaved, and the best by median is printed
// last: "HBM stream shape best: <describe(shape)>: X GB/s = Y% of D2D", among the layouts with a
// chunk counter (grid_stride is printed as a reference: it leaves a tail beside a transfer).
TEST(HbmWorkload, StreamShapes) {
  const size_t bytes = 4ull << 30;
  HbmBench bench(bytes);
  std::vector<double> copy_gbps{bench.copy_rate()};
  std::vector<ShapeRate> rates;
  const auto shapes = all_kernels({64, 128, 256, 512, 1024}, {16, 32, 64, 128});
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0 && i % 24 == 0) copy_gbps.push_back(bench.copy_rate());
    const auto& shape = shapes[i];
    std::string why_not;
    if (!bench.fits(shape, &why_not)) {
      std::printf("HBM stream shape: %s: skipped: %s\n", kernels::describe(shape).c_str(), why_not.c_str());
      continue;
    }
    SCOPED_TRACE(kernels::describe(shape));
    rates.push_back({shape, bench.rate_and_check(shape, 10)});
    const auto info = kernels::hbm_stream_kernel_info(shape);
    std::printf("HBM stream shape: %s: regs %d spill %zu: %.1f GB/s\n", kernels::describe(shape).c_str(), info.registers,
                info.local_bytes, rates.back().gbps);
  }
  copy_gbps.push_back(bench.copy_rate());
  ASSERT_FALSE(rates.empty());
  const double copy = median(copy_gbps);
  std::printf("HBM stream D2D reference: median %.1f GB/s, min %.1f, max %.1f over %zu measurements\n", copy,
              *std::min_element(copy_gbps.begin(), copy_gbps.end()), *std::max_element(copy_gbps.begin(), copy_gbps.end()),
              copy_gbps.size());
  confirm_fastest(bench, rates, copy);
}

// Both kinds of operands: checked against the float64 reference, a poisoned result caught; the
// TFLOP/s printed for each (full-entropy operands draw more power: the figure is the workload's).
TEST(GemmWorkload, CorrectAloneAndCatchesAMissedLaunch) {
  for (const char* operands : {"gaussian", "eighths"}) {
    SCOPED_TRACE(operands);
    GemmShape shape{8192, 8192, 8192};
    shape.operands = operands;
    GemmWorkload gemm(shape, current_device());  // the constructor checks against the float64 reference
    std::printf("%s\n", gemm.describe().c_str());
    Stream s = make_stream("test");
    gemm.poison_result(s.get());
    gemm.enqueue(s.get());
    EXPECT_EQ(gemm.check(s.get()), std::nullopt);
    gemm.poison_result(s.get());
    EXPECT_TRUE(gemm.check(s.get()).has_value()) << "a poisoned result passed the check";
    const double ms = time_ms(s.get(), 20, [&](cudaStream_t st) { gemm.enqueue(st); });
    std::printf("GEMM alone, %s operands: %.1f TFLOP/s (best heuristic candidate when timed: %.1f TFLOP/s)\n", operands,
                20 * gemm.work_per_launch() / (ms * 1e-3), gemm.best_tflops_when_chosen());
    EXPECT_GT(gemm.best_tflops_when_chosen(), 0.0);
  }
}

// The GPU holds exactly the operands the host's reference computes, bit for bit.
TEST(GemmOperands, TheGpusValuesAreTheHostsValues) {
  constexpr size_t kCount = 1 << 20;
  for (kernels::OperandKind kind : {kernels::OperandKind::kGaussian, kernels::OperandKind::kEighths}) {
    DeviceBuffer operand(kCount * 2, "an operand");
    Stream s = make_stream("test");
    kernels::fill_bf16_operand(operand.get(), kCount, kind, 0x5eed, s.get());
    std::vector<uint16_t> bits(kCount);
    cuda_check(cudaMemcpyAsync(bits.data(), operand.get(), kCount * 2, cudaMemcpyDeviceToHost, s.get()), "reading the operand");
    cuda_check(cudaStreamSynchronize(s.get()), "reading the operand");
    size_t differ = 0;
    for (size_t i = 0; i < kCount; ++i) differ += kernels::bf16_float(bits[i]) != kernels::operand_value(kind, 0x5eed, i);
    EXPECT_EQ(differ, 0u);
  }
}

TEST(GemmWorkload, OddShapeIsCorrectToo) {
  GemmWorkload gemm(GemmShape{1040, 528, 4112}, current_device());  // throws if the float64 reference disagrees
  Stream s = make_stream("test");
  gemm.poison_result(s.get());
  gemm.enqueue(s.get());
  EXPECT_EQ(gemm.check(s.get()), std::nullopt);
}

TEST(GemmWorkload, CorrectBesideAConcurrentCopy) {
  GemmWorkload gemm(GemmShape{8192, 8192, 8192}, current_device());
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
  GemmWorkload gemm(GemmShape{8192, 8192, 8192}, current_device());
  DeviceBuffer src(1ull << 30, "copy source"), dst(1ull << 30, "copy destination");
  const kernels::LdstShape shape{16, 512, 4};
  kernels::ldst_prepare(shape, current_device());
  gemm.poison_result(p->workload_stream());
  cuda_check(cudaStreamSynchronize(p->workload_stream()), "poisoning");
  for (int i = 0; i < 10; ++i) kernels::ldst_copy(shape, src.get(), dst.get(), src.size(), p->transfer_stream());
  for (int i = 0; i < 20; ++i) gemm.enqueue(p->workload_stream());
  cuda_check(cudaStreamSynchronize(p->transfer_stream()), "finishing the copies");
  EXPECT_EQ(gemm.check(p->workload_stream()), std::nullopt);
}

TEST(GreenPartition, ImpossibleSplitSaysWhy) {
  std::string why_not;
  EXPECT_EQ(GreenPartition::create(current_device(), sm_count(current_device()), why_not), nullptr);
  EXPECT_NE(why_not.find("green contexts unavailable"), std::string::npos) << why_not;
}

// A start gate no host releases, as a stopped peer leaves it.
struct ClosedGate {
  ClosedGate() : gate(SharedGate::create()), ticket(0) {
    gate.register_with_device();
    gate.unlink();
    ticket = gate.next_ticket();
  }
  SharedGate gate;
  uint32_t ticket;
};

// Runs `wait` and returns its error and how long it took; fails the test where it returned.
std::pair<std::string, double> failure_of(const std::function<void()>& wait) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    wait();
  } catch (const std::exception& e) {
    return {e.what(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  }
  ADD_FAILURE() << "the wait returned though the gate never opened";
  return {"", 0};
}

// A phase's window opened behind a closed gate that gives up after `gate_timeout_s`, then closed.
class WindowGateDeadlines : public ::testing::Test {
 protected:
  void open_and_close(double gate_timeout_s) {
    w_.open(g_.gate.device_word(), g_.gate.heartbeat_word(), g_.ticket, gate_timeout_s);
    w_.close();
  }

  ClosedGate g_;
  Stream s_ = make_stream("a gated window");
  GatedWindow w_{s_.get(), "test"};
};

TEST_F(WindowGateDeadlines, PhaseWindowFailsWhenItsGateGivesUp) {
  open_and_close(0.2);
  const auto [error, seconds] = failure_of([&] { w_.wait_open(30.0); });
  EXPECT_NE(error.find("never opened within"), std::string::npos) << error;
  EXPECT_LT(seconds, 10.0) << "the gate gives up after 0.2 s";
}

TEST_F(WindowGateDeadlines, PhaseWindowWaitEndsAtItsDeadlineWhileTheGateHolds) {
  open_and_close(60.0);
  const auto [error, seconds] = failure_of([&] { w_.wait_open(0.3); });
  EXPECT_NE(error.find("timed out after"), std::string::npos) << error;
  EXPECT_LT(seconds, 10.0);
  g_.gate.release(g_.ticket);  // the window still ends, and its figures read
  EXPECT_GE(w_.wait(30.0).elapsed_ms, 0.0);
}

// A sample of four 1 MiB copies, fed as the parameter says, queued behind a closed gate that
// gives up after `gate_timeout_s`.
class TimerGateDeadlines : public ::testing::TestWithParam<Feeding> {
 protected:
  void queue_sample(double gate_timeout_s) {
    timer_.set_feeding(GetParam(), 1);
    timer_.build([&](uint64_t, cudaStream_t st) {
      cuda_check(cudaMemcpyAsync(dst_.get(), src_.get(), 1 << 20, cudaMemcpyDeviceToDevice, st), "a test copy");
    }, 4);
    timer_.enqueue_gated(g_.gate.device_word(), g_.gate.heartbeat_word(), g_.ticket, gate_timeout_s);
  }

  ClosedGate g_;
  DeviceBuffer src_{1 << 20, "a test source"}, dst_{1 << 20, "a test destination"};
  TransferTimer timer_;
};

TEST_P(TimerGateDeadlines, SampleFailsWhenItsGateGivesUp) {
  queue_sample(0.2);
  const auto [error, seconds] = failure_of([&] { timer_.wait(30.0, "a test sample"); });
  EXPECT_NE(error.find("never opened within"), std::string::npos) << error;
  EXPECT_LT(seconds, 10.0);
}

TEST_P(TimerGateDeadlines, SampleWaitEndsAtItsDeadlineWhileTheGateHolds) {
  queue_sample(60.0);
  const auto [error, seconds] = failure_of([&] { timer_.wait(0.3, "a test sample"); });
  EXPECT_NE(error.find("timed out after"), std::string::npos) << error;
  EXPECT_LT(seconds, 10.0);
  g_.gate.release(g_.ticket);  // let the gate kernel end before the timer's memory goes
  cuda_check(cudaStreamSynchronize(timer_.stream()), "finishing the released sample");
}

INSTANTIATE_TEST_SUITE_P(Feedings, TimerGateDeadlines,
                         ::testing::Values(Feeding::kCaptured, Feeding::kQueued, Feeding::kHostDriven),
                         [](const ::testing::TestParamInfo<Feeding>& info) {
                           return std::string(info.param == Feeding::kCaptured ? "captured"
                                              : info.param == Feeding::kQueued ? "queued" : "host_driven");
                         });

}  // namespace
}  // namespace p2pbench
