// GPU tests of latency_read's chase variants (docs/latency-read-vs-nvbandwidth.md): for every
// chain geometry and load kind, the chain is ONE cycle through the whole footprint, a chase of k
// loads ends on element k mod n (so every load returned the expected value), and the grid-of-
// one-block-per-SM launch chases with the block it was asked for. With two GPUs it also times
// the variants in ONE process with peer access (nvbandwidth's set-up) and prints
//   IN_PROCESS launch=<single|every_sm> load=<...> loads=<n> kernel_ns=<x> events_ns=<y> ...
// lines that scripts/latency-investigation.sh puts beside the driver's IPC figures.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "gpu_peer_access.hpp"
#include "kernels/latency_kernels.hpp"

namespace p2pbench::kernels {
namespace {

struct Geometry {
  size_t bytes;
  size_t stride;
};

// nvbandwidth's (2 MiB, 128 B), a finer and a coarser stride, a small and an odd footprint.
const Geometry kGeometries[] = {{2u << 20, 128}, {2u << 20, 64}, {2u << 20, 256}, {64u << 10, 128}, {1000, 24}};
const ChaseLoad kLoads[] = {ChaseLoad::kWeak, ChaseLoad::kStrong, ChaseLoad::kAbsolute, ChaseLoad::kGeneric};

const char* load_name(ChaseLoad l) {
  switch (l) {
    case ChaseLoad::kWeak: return "plain";
    case ChaseLoad::kStrong: return "relaxed_sys";
    case ChaseLoad::kAbsolute: return "absolute";
    case ChaseLoad::kGeneric: return "generic";
  }
  return "?";
}

// Chains of the reader's own addresses (absolute, generic) rather than offsets.
bool holds_addresses(ChaseLoad l) { return l == ChaseLoad::kAbsolute || l == ChaseLoad::kGeneric; }

// A chain in `owner`'s memory, built as the driver builds it: by the owner (offsets) or by the
// reader through its mapping (absolute addresses of the reader's view).
struct Chain {
  DeviceBuffer buf;
  Geometry g;
  ChaseLoad load;
  uint64_t base() const { return holds_addresses(load) ? reinterpret_cast<uint64_t>(buf.get()) : 0; }
};

Chain make_chain(int owner, int reader, Geometry g, ChaseLoad load) {
  cuda_check(cudaSetDevice(owner), "selecting the owner");
  Chain c{DeviceBuffer(g.bytes, "a chase buffer"), g, load};
  cuda_check(cudaMemset(c.buf.get(), 0xff, g.bytes), "poisoning the chase buffer");
  // The poison is queued on the owner's legacy stream, which the builder's stream does not wait for.
  cuda_check(cudaDeviceSynchronize(), "poisoning the chase buffer");
  const int builder = holds_addresses(load) ? reader : owner;
  cuda_check(cudaSetDevice(builder), "selecting the chain's builder");
  Stream s = make_stream("the chain builder");
  build_chase_chain(c.buf.get(), g.bytes, g.stride, s.get(), holds_addresses(load) ? c.buf.get() : nullptr);
  cuda_check(cudaStreamSynchronize(s.get()), "building the chain");
  return c;
}

// Follows the chain on the host from element 0: it must return to 0 after exactly n steps,
// having visited every element once (a single cycle through the whole footprint).
void expect_single_cycle(const Chain& c) {
  std::vector<uint64_t> words(c.g.bytes / 8);
  cuda_check(cudaMemcpy(words.data(), c.buf.get(), words.size() * 8, cudaMemcpyDeviceToHost), "reading the chain");
  const uint64_t n = c.g.bytes / c.g.stride;
  std::vector<bool> seen(n, false);
  uint64_t off = 0;
  for (uint64_t step = 0; step < n; ++step) {
    ASSERT_EQ(off % c.g.stride, 0u) << "step " << step << " lands between elements";
    ASSERT_LT(off / c.g.stride, n) << "step " << step << " leaves the footprint";
    ASSERT_FALSE(seen[off / c.g.stride]) << "element " << off / c.g.stride << " visited twice (step " << step << ")";
    seen[off / c.g.stride] = true;
    const uint64_t next = words[off / 8];
    ASSERT_GE(next, c.base()) << "element " << off / c.g.stride << " holds " << next;
    off = next - c.base();
  }
  EXPECT_EQ(off, 0u) << "the chain does not close after " << n << " elements";
}

struct Timed {
  ChaseResult r;
  float event_ms;
};

// One launch in a grid of `grid` 1-thread blocks, block `chaser` chasing, bracketed by events.
Timed chase(const Chain& c, uint64_t loads, unsigned grid, unsigned chaser, cudaStream_t stream) {
  MappedHostBuffer result(sizeof(ChaseResult), "the chase result");
  auto* r = static_cast<ChaseResult*>(result.host());
  std::memset(r, 0xab, sizeof(ChaseResult));
  Event start = make_event("chase start");
  Event stop = make_event("chase stop");
  cuda_check(cudaEventRecord(start.get(), stream), "recording the chase start");
  enqueue_pointer_chase(c.buf.get(), c.g.bytes, c.g.stride, loads, static_cast<ChaseResult*>(result.device()), stream,
                        c.load, {grid, chaser});
  cuda_check(cudaEventRecord(stop.get(), stream), "recording the chase stop");
  cuda_check(cudaStreamSynchronize(stream), "waiting for the chase");
  Timed t{*r, 0.0f};
  cuda_check(cudaEventElapsedTime(&t.event_ms, start.get(), stop.get()), "reading the chase's event time");
  return t;
}

// A chase of k loads ends on element k mod n: checked for k around the wrap, so the value each
// of those loads returned is checked, not just the last.
void expect_ends(const Chain& c, int reader) {
  cuda_check(cudaSetDevice(reader), "selecting the reader");
  Stream s = make_stream("the chase");
  const uint64_t n = c.g.bytes / c.g.stride;
  for (uint64_t k : {uint64_t{1}, uint64_t{2}, n - 1, n, n + 1, 2 * n + 3, uint64_t{7575}}) {
    const Timed t = chase(c, k, 1, 0, s.get());
    EXPECT_EQ(t.r.final_offset, expected_chase_end(c.g.bytes, c.g.stride, k))
        << load_name(c.load) << ", " << c.g.bytes << " B / " << c.g.stride << " B, " << k << " loads";
    EXPECT_EQ(t.r.loads, k);
    EXPECT_EQ(t.r.chaser_block, 0u);
  }
}

TEST(ChaseVariants, EveryGeometryIsOneCycleAndEndsWhereExpected) {
  for (const Geometry& g : kGeometries)
    for (ChaseLoad load : kLoads) {
      SCOPED_TRACE(std::string(load_name(load)) + " " + std::to_string(g.bytes) + "/" + std::to_string(g.stride));
      const Chain c = make_chain(0, 0, g, load);
      expect_single_cycle(c);
      expect_ends(c, 0);
    }
}

// nvbandwidth's launch: a grid of one block per SM, block k chasing. Every k chases (the
// others return at once), ends where expected, and the SMs used are recorded.
TEST(ChaseVariants, EverySmLaunchChasesWithTheBlockAsked) {
  cuda_check(cudaSetDevice(0), "selecting device 0");
  const auto grid = static_cast<unsigned>(sm_count(0));
  const Chain c = make_chain(0, 0, {2u << 20, 128}, ChaseLoad::kAbsolute);
  Stream s = make_stream("the chase");
  std::vector<unsigned> sms;
  for (unsigned k = 0; k < grid; ++k) {
    const Timed t = chase(c, 1000, grid, k, s.get());
    ASSERT_EQ(t.r.chaser_block, k);
    ASSERT_EQ(t.r.final_offset, expected_chase_end(2u << 20, 128, 1000)) << "block " << k;
    sms.push_back(t.r.smid);
  }
  std::sort(sms.begin(), sms.end());
  const auto distinct = std::unique(sms.begin(), sms.end()) - sms.begin();
  std::printf("  every_sm: %u launches chased from %ld distinct SMs\n", grid, static_cast<long>(distinct));
  EXPECT_GT(distinct, 1) << "every block ran on the same SM";
  EXPECT_THROW(enqueue_pointer_chase(c.buf.get(), 2u << 20, 128, 10, nullptr, s.get(), ChaseLoad::kWeak, {4, 4}),
               std::exception);
}

TEST(ChaseVariantsTwoGpus, PeerChainsAreOneCycleAndEndWhereExpected) {
  if (!testing_support::peer_access_between_gpus_0_and_1()) GTEST_SKIP() << "needs two GPUs with peer access";
  for (ChaseLoad load : kLoads) {
    const Chain c = make_chain(1, 0, {2u << 20, 128}, load);
    expect_single_cycle(c);
    expect_ends(c, 0);
  }
}

// Timings in one process with peer access (nvbandwidth's set-up), GPU 0 reading GPU 1: the
// `single` block and the `every_sm` sweep (one launch per SM, events summed as nvbandwidth).
// Informational: printed for the investigation script, checked only for sanity.
TEST(ChaseVariantsTwoGpus, InProcessPeerTimings) {
  if (!testing_support::peer_access_between_gpus_0_and_1()) GTEST_SKIP() << "needs two GPUs with peer access";
  const auto grid = static_cast<unsigned>(sm_count(0));
  for (ChaseLoad load : {ChaseLoad::kWeak, ChaseLoad::kAbsolute, ChaseLoad::kGeneric}) {
    const Chain c = make_chain(1, 0, {2u << 20, 128}, load);
    cuda_check(cudaSetDevice(0), "selecting the reader");
    Stream s = make_stream("the chase");
    for (uint64_t loads : {uint64_t{20000}, uint64_t{7575}}) {
      (void)chase(c, loads, 1, 0, s.get());  // warm-up
      std::vector<double> single;
      unsigned single_sm = 0;
      for (int i = 0; i < 5; ++i) {
        const Timed t = chase(c, loads, 1, 0, s.get());
        single.push_back(double(t.r.elapsed_ns) / double(loads));
        single_sm = t.r.smid;
      }
      std::sort(single.begin(), single.end());
      double kernel_ns = 0, event_ms = 0, lo = 1e30, hi = 0;
      unsigned lo_sm = 0, hi_sm = 0;
      for (unsigned k = 0; k < grid; ++k) {
        const Timed t = chase(c, loads, grid, k, s.get());
        ASSERT_EQ(t.r.final_offset, expected_chase_end(2u << 20, 128, loads));
        const double ns = double(t.r.elapsed_ns) / double(loads);
        if (ns < lo) lo = ns, lo_sm = t.r.smid;
        if (ns > hi) hi = ns, hi_sm = t.r.smid;
        kernel_ns += double(t.r.elapsed_ns);
        event_ms += t.event_ms;
      }
      const double all = double(loads) * grid;
      std::printf("IN_PROCESS launch=single load=%s loads=%llu kernel_ns=%.2f sm=%u\n", load_name(load),
                  static_cast<unsigned long long>(loads), single[2], single_sm);
      std::printf("IN_PROCESS launch=every_sm load=%s loads=%llu kernel_ns=%.2f events_ns=%.2f "
                  "sm_min=%.2f(sm%u) sm_max=%.2f(sm%u)\n",
                  load_name(load), static_cast<unsigned long long>(loads), kernel_ns / all, event_ms * 1e6 / all, lo,
                  lo_sm, hi, hi_sm);
      EXPECT_GT(single[2], 1.0);
      EXPECT_LT(single[2], 100000.0);
    }
  }
}

}  // namespace
}  // namespace p2pbench::kernels
