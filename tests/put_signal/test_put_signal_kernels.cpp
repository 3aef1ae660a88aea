// The put_signal kernels in one process, sender and receiver on their own streams (one GPU, or
// the first two GPUs with peer access when P2PBENCH_ORDERING_DEVICES="0,1"):
//  - concurrent runs verify every chunk as it arrives and every byte after, with channels that
//    run out of credits and wait for the receiver;
//  - a serialized run (sender first, within its credits), which needs no two kernels at once
//    (CUDA 13.0's compute-sanitizer runs both ends at once: the concurrent runs run under it too);
//  - the ordering counts: a bounded number of tries with the signal stored without release, or
//    waited for without acquire, counting chunks whose data was not there when the flag was.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/signal_area.hpp"
#include "gpu_peer_access.hpp"
#include "kernels/pattern_kernels.hpp"
#include "kernels/sm_holder.hpp"
#include "measure/sanitizer_mode.hpp"
#include "methods/put_signal/put_signal_kernels.hpp"

namespace {

// Each stream of this process its own hardware queue (the driver's default is 8, shared round-robin
// beyond), read when the context is created: otherwise the SM holder's stream may share a queue
// with a sender's stream, whose copies would then wait behind the holder's kernel for that alone.
const int kOwnQueues = setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);

using namespace p2pbench;
using namespace p2pbench::put_signal;

// kCeCopy: the copy engine with its signals and credits as 4-byte copies (CeSignals::by_copy).
enum class Engine { kLdst, kTma, kCe, kCeCopy };
const char* name(Engine e) {
  return e == Engine::kLdst ? "ldst" : e == Engine::kTma ? "tma" : e == Engine::kCe ? "ce" : "ce_copy";
}
bool is_ce(Engine e) { return e == Engine::kCe || e == Engine::kCeCopy; }
const char* name(Ordering o) {
  return o == Ordering::kReleaseAcquire ? "release/acquire" : o == Ordering::kNoRelease ? "no release" : "no acquire";
}

bool under_sanitizer() { return sanitizer_mode_wanted(false); }

struct Report {
  RegionHeader receiver{}, sender{};
  unsigned long long bad_bytes = 0;
};

// One sender GPU and one receiver GPU (possibly the same), their buffers and signal regions.
class Pair {
 public:
  Pair(int send_device, int recv_device, size_t bytes) : send_(send_device), recv_(recv_device) {
    // Each end writes the other's memory: the sender the data and flags, the receiver the credits.
    // Two GPUs are always 0 and 1 here.
    if (send_ != recv_ && !testing_support::peer_access_between_gpus_0_and_1())
      throw std::runtime_error("GPUs 0 and 1 have no peer access");
    cuda_check(cudaSetDevice(recv_), "selecting the receiver");
    cuda_check(cudaMalloc(&dst_, bytes), "dst");
    cuda_check(cudaMalloc(&recv_region_, kSignalRegionBytes), "receiver region");
    cuda_check(cudaStreamCreateWithFlags(&recv_stream_, cudaStreamNonBlocking), "receiver stream");
    cuda_check(cudaMallocHost(&check_, sizeof(kernels::PatternCheck)), "check");
    cuda_check(cudaSetDevice(send_), "selecting the sender");
    cuda_check(cudaMalloc(&src_, bytes), "src");
    cuda_check(cudaMalloc(&send_region_, kSignalRegionBytes), "sender region");
    cuda_check(cudaStreamCreateWithFlags(&send_stream_, cudaStreamNonBlocking), "sender stream");
    for (int d : {send_, recv_}) {
      cudaSetDevice(d);
      ensure_prepared(d);
    }
  }

  // `receiver_seed`: the pattern the receiver is told to expect (default: the source's).
  CeSignals ce_how;  // how the copy-engine sender signals (its chunks' copies, writes or copies)

  Report run(Engine e, Geometry g, int blocks, int threads, Ordering o, bool concurrent, uint64_t seed,
             uint64_t receiver_seed = 0) {
    cuda_check(cudaSetDevice(send_), "sender");
    kernels::fill_pattern(src_, g.bytes, seed, 0, send_stream_);
    reset_region(send_region_, seed, send_stream_);
    cuda_check(cudaStreamSynchronize(send_stream_), "filling");
    cuda_check(cudaSetDevice(recv_), "receiver");
    kernels::fill_poison(dst_, g.bytes, seed, 0, recv_stream_);
    reset_region(recv_region_, receiver_seed ? receiver_seed : seed, recv_stream_);
    cuda_check(cudaStreamSynchronize(recv_stream_), "poisoning");
    const Side sender = side(g, true), receiver = side(g, false);
    if (concurrent) {
      receive(receiver, o, recv_stream_);
      cuda_check(cudaSetDevice(send_), "sender");
      send(e, sender, blocks, threads, o);
    } else {  // the receiver after the sender, on the sender's stream: one kernel at a time
      cuda_check(cudaSetDevice(send_), "sender");
      send(e, sender, blocks, threads, o);
      cuda_check(cudaStreamSynchronize(send_stream_), "the sender alone");
      cuda_check(cudaSetDevice(recv_), "receiver");
      receive(receiver, o, recv_stream_);
    }
    cuda_check(cudaStreamSynchronize(send_stream_), "the sender");
    cuda_check(cudaStreamSynchronize(recv_stream_), "the receiver");
    Report r;
    cuda_check(cudaMemcpy(&r.receiver, recv_region_, sizeof(RegionHeader), cudaMemcpyDeviceToHost), "receiver header");
    cuda_check(cudaMemcpy(&r.sender, send_region_, sizeof(RegionHeader), cudaMemcpyDeviceToHost), "sender header");
    cuda_check(cudaSetDevice(recv_), "receiver");
    *check_ = {0, ~0ull};
    kernels::check_pattern(dst_, g.bytes, seed, 0, check_, recv_stream_);
    cuda_check(cudaStreamSynchronize(recv_stream_), "checking");
    r.bad_bytes = check_->mismatches;
    return r;
  }

  // One end alone, its peer never running, waits cut to `timeout_ns`: the receiver waits for
  // signals that never come; the sender, its credits all taken (busy words set), for credits.
  // Returns that end's header and whether every credit word of the geometry is free afterwards.
  std::pair<RegionHeader, bool> run_alone(Engine e, const Geometry& g, bool sender_end, uint64_t timeout_ns) {
    cuda_check(cudaSetDevice(send_), "sender");
    reset_region(send_region_, 1, send_stream_);
    // Every credit taken: a sender must wait; a receiver that gives up must free them.
    cuda_check(cudaMemsetAsync(static_cast<char*>(send_region_) + kBusyOffset, 0xff,
                               size_t(g.channels) * g.in_flight * sizeof(uint32_t), send_stream_), "taking the credits");
    cuda_check(cudaStreamSynchronize(send_stream_), "taking the credits");
    cuda_check(cudaSetDevice(recv_), "receiver");
    reset_region(recv_region_, 1, recv_stream_);
    cuda_check(cudaStreamSynchronize(recv_stream_), "resetting the receiver");
    Side s = side(g, sender_end);
    s.timeout_ns = timeout_ns;
    if (sender_end) {
      cuda_check(cudaSetDevice(send_), "sender");
      send(e, s, 1, int(g.channels) * 32, Ordering::kReleaseAcquire);
      cuda_check(cudaStreamSynchronize(send_stream_), "the sender alone");
    } else {
      receive(s, Ordering::kReleaseAcquire, recv_stream_);
      cuda_check(cudaStreamSynchronize(recv_stream_), "the receiver alone");
    }
    RegionHeader h{};
    cuda_check(cudaMemcpy(&h, sender_end ? send_region_ : recv_region_, sizeof h, cudaMemcpyDeviceToHost), "the header");
    std::vector<uint32_t> busy(size_t(g.channels) * g.in_flight);
    cuda_check(cudaMemcpy(busy.data(), static_cast<char*>(send_region_) + kBusyOffset, busy.size() * sizeof(uint32_t),
                          cudaMemcpyDeviceToHost), "the credits");
    return {h, std::all_of(busy.begin(), busy.end(), [](uint32_t b) { return b == 0; })};
  }

  // The copy-engine sender alone (its credits all free: in_flight covers every chunk) while
  // spinning blocks hold every SM of its GPU: whether its commands finished within
  // `deadline_s`, the signals set, and the bytes wrong after.
  struct Beside {
    bool finished = false;
    uint64_t signals_set = 0;
    unsigned long long bad_bytes = 0;
  };
  // The control: a copy engine's copy to pinned host memory while every SM is held.
  bool copy_to_host_with_every_sm_taken(double deadline_s) {
    cuda_check(cudaSetDevice(send_), "sender");
    Stream holder_stream = make_stream("the SM holder's stream");
    kernels::SmHolder holder(holder_stream.get(), 5.0, deadline_s + 10.0);
    cuda_check(cudaMemcpyAsync(check_, src_, sizeof(kernels::PatternCheck), cudaMemcpyDeviceToHost, send_stream_),
               "a copy to the host beside the SM holder");
    const bool done = kernels::finished_within(send_stream_, deadline_s) && holder.still_holding();
    holder.release();
    cuda_check(cudaStreamSynchronize(holder_stream.get()), "the SM holder");
    cuda_check(cudaStreamSynchronize(send_stream_), "the copy to the host");
    return done;
  }

  Beside send_with_every_sm_taken(const Geometry& g, double deadline_s) {
    cuda_check(cudaSetDevice(recv_), "receiver");
    kernels::fill_poison(dst_, g.bytes, 42, 0, recv_stream_);
    reset_region(recv_region_, 42, recv_stream_);
    cuda_check(cudaStreamSynchronize(recv_stream_), "poisoning");
    cuda_check(cudaSetDevice(send_), "sender");
    kernels::fill_pattern(src_, g.bytes, 42, 0, send_stream_);
    reset_region(send_region_, 42, send_stream_);
    cuda_check(cudaStreamSynchronize(send_stream_), "filling");
    Stream holder_stream = make_stream("the SM holder's stream");
    Beside b;
    {
      kernels::SmHolder holder(holder_stream.get(), 5.0, deadline_s + 10.0);
      ce_.send(side(g, true), Ordering::kReleaseAcquire, ce_how, send_stream_);
      b.finished = kernels::finished_within(send_stream_, deadline_s) && holder.still_holding();
    }  // released: whatever waited for an SM runs now
    cuda_check(cudaStreamSynchronize(holder_stream.get()), "the SM holder");
    cuda_check(cudaStreamSynchronize(send_stream_), "the sender");
    std::vector<uint32_t> ready(g.chunks());
    cuda_check(cudaMemcpy(ready.data(), static_cast<char*>(recv_region_) + kReadyOffset, ready.size() * sizeof(uint32_t),
                          cudaMemcpyDeviceToHost), "the signals");
    b.signals_set = uint64_t(std::count(ready.begin(), ready.end(), 1u));
    cuda_check(cudaSetDevice(recv_), "receiver");
    *check_ = {0, ~0ull};
    kernels::check_pattern(dst_, g.bytes, 42, 0, check_, recv_stream_);
    cuda_check(cudaStreamSynchronize(recv_stream_), "checking");
    b.bad_bytes = check_->mismatches;
    return b;
  }

 private:
  Side side(const Geometry& g, bool sender) const {
    Side s;
    s.g = g;
    s.src = src_;
    s.dst = dst_;
    s.ready = reinterpret_cast<uint32_t*>(static_cast<char*>(recv_region_) + kReadyOffset);
    s.busy = reinterpret_cast<uint32_t*>(static_cast<char*>(send_region_) + kBusyOffset);
    s.header = static_cast<RegionHeader*>(sender ? send_region_ : recv_region_);
    s.timeout_ns = 5'000'000'000ull;
    return s;
  }
  void send(Engine e, const Side& s, int blocks, int threads, Ordering o) {
    if (e == Engine::kLdst)
      ldst_send(s, blocks, threads, o, send_stream_);
    else if (e == Engine::kTma)
      tma_send(s, blocks, threads, kSmem, o, send_stream_);
    else
      ce_.send(s, o, ce_how, send_stream_);
  }
  void ensure_prepared(int device) {
    ldst_prepare(device);
    if (!tma_unsupported_reason(1, 128, kSmem, device)) tma_prepare(128, kSmem, device);
  }

  static constexpr uint64_t kSmem = 32768;
  int send_, recv_;
  void *src_ = nullptr, *dst_ = nullptr, *send_region_ = nullptr, *recv_region_ = nullptr;
  cudaStream_t send_stream_ = nullptr, recv_stream_ = nullptr;
  kernels::PatternCheck* check_ = nullptr;
  CopyEngineSender ce_;
};

std::pair<int, int> devices() {
  const char* spec = std::getenv("P2PBENCH_ORDERING_DEVICES");
  if (spec && std::string(spec) == "0,1") return {0, 1};
  return {0, 0};
}

bool tma_runs() { return !tma_unsupported_reason(1, 128, 32768, 0); }

constexpr size_t kBytes = (4u << 20) + 48;  // a short last chunk for every chunk size below

TEST(PutSignalKernels, EveryChunkAndByteWhileCreditsRunOut) {
  const auto [s, r] = devices();
  Pair pair(s, r, kBytes);
  for (Engine e : {Engine::kLdst, Engine::kTma}) {
    if (e == Engine::kTma && !tma_runs()) continue;
    for (uint32_t chunk : {512u, 16384u, 1u << 20})
      for (uint32_t in_flight : {1u, 4u}) {
        const int blocks = 2, threads = 128;
        const Geometry g{kBytes, chunk, uint32_t(blocks * threads / 32), in_flight};
        const Report rep = pair.run(e, g, blocks, threads, Ordering::kReleaseAcquire, true, 1000 + chunk + in_flight);
        const std::string what = std::string(name(e)) + " chunk " + std::to_string(chunk) + " in flight " + std::to_string(in_flight);
        EXPECT_EQ(rep.receiver.timed_out, 0u) << what << ": stuck at chunk " << rep.receiver.stuck_chunk;
        EXPECT_EQ(rep.sender.timed_out, 0u) << what << ": stuck at chunk " << rep.sender.stuck_chunk;
        EXPECT_EQ(rep.receiver.bad_chunks, 0u) << what;
        EXPECT_EQ(rep.bad_bytes, 0u) << what;
      }
  }
}

// The copy engine's sender, one channel, against the same receiver: a stream that waits on
// credits the receiver kernel returns; signals and credits by stream writes or by 4-byte copies,
// one signal per chunk or per group of four puts, the group's puts as separate copies or one batch.
TEST(PutSignalKernels, CopyEngineEveryChunkAndByte) {
  const auto [s, r] = devices();
  Pair pair(s, r, kBytes);
  for (bool by_copy : {false, true})
    for (bool batched : {false, true})
      for (uint32_t group : {1u, 4u})
        for (uint32_t chunk : {4096u, 65536u})
          for (uint32_t in_flight : {1u, 4u}) {
            const Geometry g{kBytes, chunk * group, 1, in_flight};
            pair.ce_how = {group > 1 ? chunk : 0u, by_copy, batched};
            const Report rep = pair.run(Engine::kCe, g, 0, 0, Ordering::kReleaseAcquire, true, 3000 + chunk + in_flight);
            const std::string what = std::string("ce chunk ") + std::to_string(chunk) + " group " + std::to_string(group) +
                                     (by_copy ? " signal copy" : " signal write") + (batched ? " batched" : "") +
                                     " in flight " + std::to_string(in_flight);
            EXPECT_EQ(rep.receiver.timed_out, 0u) << what << ": stuck at chunk " << rep.receiver.stuck_chunk;
            EXPECT_EQ(rep.receiver.bad_chunks, 0u) << what;
            EXPECT_EQ(rep.bad_bytes, 0u) << what;
          }
  pair.ce_how = {};
}

// "No SM on the sender", measured between two GPUs: every SM of the sender's GPU held by spinning
// blocks, the copy-engine sender's waits, copies to the peer and signals written by the stream
// (one per chunk or per group, its puts separate or batched) still finish, and every chunk is
// signalled and every byte there.
// Not the signals as 4-byte copies (signal_copy 1): on two H200 those did not finish while every SM
// was held, so the engine claims no SM count for them. Not on one GPU: there cudaMemcpyAsync within
// the GPU waits for an SM (test_sm_holder, an H200), so the put is zero-SM only towards another GPU.
TEST(PutSignalKernels, CopyEngineSenderNeedsNoSmTwoGpus) {
  if (under_sanitizer()) GTEST_SKIP() << "the sanitizer slows the holder's blocks past their start deadline";
  ASSERT_EQ(kOwnQueues, 0) << "setting CUDA_DEVICE_MAX_CONNECTIONS";
  int gpus = 0;
  cuda_check(cudaGetDeviceCount(&gpus), "counting the GPUs");
  if (gpus < 2) GTEST_SKIP() << "needs two GPUs: copies within one GPU wait for an SM (test_sm_holder)";
  Pair pair(0, 1, kBytes);
  ASSERT_TRUE(pair.copy_to_host_with_every_sm_taken(5.0))
      << "a copy to the host did not finish beside the SM holder: the holder blocks more than SMs";
  for (bool batched : {false, true})
    for (uint32_t group : {1u, 4u}) {
      // Four signalled chunks, all credits free: four forked streams, each its own hardware queue.
      const uint32_t chunk = 65536;
      const Geometry g{4ull * chunk * group, chunk * group, 1, 4};
      pair.ce_how = {group > 1 ? chunk : 0u, false, batched};
      const auto b = pair.send_with_every_sm_taken(g, 5.0);
      const std::string what = std::string("ce group ") + std::to_string(group) + " signal write" + (batched ? " batched" : "");
      EXPECT_TRUE(b.finished) << what << ": did not finish while every SM was held";
      EXPECT_EQ(b.signals_set, g.chunks()) << what;
      EXPECT_EQ(b.bad_bytes, 0u) << what;
    }
  pair.ce_how = {};
}

// Every wait has a deadline: an end whose peer never runs gives up after its timeout, says which
// wait and chunk, and a receiver that gives up frees its channels' credits (so a copy-engine
// stream waiting on one, which has no timeout of its own, runs to its end).
TEST(PutSignalKernels, WaitsGiveUpAtTheirDeadline) {
  const auto [s, r] = devices();
  Pair pair(s, r, kBytes);
  const Geometry g{64 << 10, 4096, 4, 2};
  const uint64_t timeout_ns = 50'000'000;
  auto [receiver, credits_free] = pair.run_alone(Engine::kLdst, g, false, timeout_ns);
  EXPECT_EQ(receiver.timed_out, uint32_t(kWaitedForSignal));
  EXPECT_LT(receiver.stuck_chunk, g.channels) << "each channel's first chunk never came";
  EXPECT_TRUE(credits_free) << "the receiver gave every credit back when it gave up";
  for (Engine e : {Engine::kLdst, Engine::kTma}) {
    if (e == Engine::kTma && !tma_runs()) continue;
    auto [sender, returned] = pair.run_alone(e, g, true, timeout_ns);
    EXPECT_EQ(sender.timed_out, uint32_t(kWaitedForCredit)) << name(e);
    EXPECT_LT(sender.stuck_chunk, g.channels) << name(e);
    EXPECT_FALSE(returned) << name(e) << ": nobody was there to return the credits";
  }
}

TEST(PutSignalKernels, SerializedWithinCredits) {
  const auto [s, r] = devices();
  Pair pair(s, r, kBytes);
  for (Engine e : {Engine::kLdst, Engine::kTma}) {
    if (e == Engine::kTma && !tma_runs()) continue;
    // 8 channels x 4 credits x 16 KiB = 512 KiB: the sender never waits for the receiver.
    const Geometry g{512 << 10, 16384, 8, 4};
    const Report rep = pair.run(e, g, 1, 256, Ordering::kReleaseAcquire, false, 77);
    EXPECT_EQ(rep.receiver.timed_out + rep.sender.timed_out, 0u) << name(e);
    EXPECT_EQ(rep.receiver.bad_chunks, 0u) << name(e);
    EXPECT_EQ(rep.bad_bytes, 0u) << name(e);
  }
}

TEST(PutSignalKernels, TheReceiversSpotCheckCanFail) {
  const auto [s, r] = devices();
  Pair pair(s, r, kBytes);
  const Geometry g{64 << 10, 4096, 4, 2};
  // The receiver told to expect another pattern than the source holds: every chunk's spot check
  // fails (so it can fail), while the bytes themselves arrive right.
  const Report rep = pair.run(Engine::kLdst, g, 1, 128, Ordering::kReleaseAcquire, true, 5, 6);
  EXPECT_EQ(rep.receiver.timed_out, 0u);
  EXPECT_EQ(rep.receiver.bad_chunks, g.chunks());
  EXPECT_NE(rep.receiver.first_bad_chunk, 0u);
  EXPECT_EQ(rep.bad_bytes, 0u);
}

// Bounded tries of each ordering; the counts are printed for the docs. Only release/acquire is
// asserted (zero stale chunks): the others may or may not show reordering on a given machine.
TEST(PutSignalKernels, OrderingCounts) {
  // Under the sanitizer a count of stale chunks says nothing of the hardware, and the driver's
  // refusal of a stream write without a barrier (tried here, and caught) is an error it counts.
  if (under_sanitizer()) GTEST_SKIP() << "ordering counts mean nothing at the sanitizer's pace";
  const auto [s, r] = devices();
  const int tries = std::getenv("P2PBENCH_ORDERING_TRIES") ? std::atoi(std::getenv("P2PBENCH_ORDERING_TRIES")) : 50;
  Pair pair(s, r, kBytes);
  for (Engine e : {Engine::kLdst, Engine::kTma, Engine::kCe, Engine::kCeCopy}) {
    if (e == Engine::kTma && !tma_runs()) continue;
    pair.ce_how.by_copy = e == Engine::kCeCopy;
    for (Ordering o : {Ordering::kReleaseAcquire, Ordering::kNoRelease, Ordering::kNoAcquire}) {
      const Geometry g{4 << 20, 4096, is_ce(e) ? 1u : 32u, 8};
      uint64_t stale = 0, checked = 0, wrong_after = 0;
      for (int t = 0; t < tries; ++t) {
        Report rep;
        try {
          rep = pair.run(e, g, 8, 128, o, true, 9000 + uint64_t(t));
        } catch (const std::exception& ex) {  // the driver may refuse a signal write without a barrier
          std::printf("ORDERING devices %d->%d sender %-4s %-15s not run: %s\n", s, r, name(e), name(o), ex.what());
          ASSERT_NE(o, Ordering::kReleaseAcquire) << ex.what();
          cudaGetLastError();
          break;
        }
        ASSERT_EQ(rep.receiver.timed_out + rep.sender.timed_out, 0u) << name(e) << " " << name(o);
        stale += rep.receiver.bad_chunks;
        checked += g.chunks();
        wrong_after += rep.bad_bytes;
      }
      std::printf("ORDERING devices %d->%d sender %-4s %-15s tries %d chunks checked %llu stale %llu "
                  "(bytes wrong after the sample: %llu)\n",
                  s, r, name(e), name(o), tries, (unsigned long long)checked, (unsigned long long)stale,
                  (unsigned long long)wrong_after);
      EXPECT_EQ(wrong_after, 0u) << "every byte lands in the end, whatever the ordering";
      if (o == Ordering::kReleaseAcquire) {
        EXPECT_EQ(stale, 0u) << name(e) << ": a signal seen before its data";
      }
    }
  }
}

}  // namespace
