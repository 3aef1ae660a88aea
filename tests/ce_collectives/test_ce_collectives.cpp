// The copy-engine collectives on real GPUs, driven as the case loop drives them (before_sample,
// fill, poison, launch_fused, verify, stalled), two ranks in one process:
//  - a wait whose peer never signals is released by the guard at its deadline, and says whom it
//    waited for (one GPU);
//  - all_gather_ce and all_to_all_ce complete with every SM of both GPUs held, and every byte of
//    each rank's output matches the reference (two GPUs).
#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/signal_area.hpp"
#include "engines/engine_registry.hpp"
#include "gpu_peer_access.hpp"
#include "kernels/sm_holder.hpp"
#include "kernels/stream_value_ops.hpp"
#include "methods/ce_collectives/wait_guard.hpp"

namespace {

// Each stream its own hardware queue (read when the context is created): a collective's stream
// sharing a queue with the SM holder's would wait behind the holder's kernel for that alone.
const int kOwnQueues = setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);

using namespace p2pbench;

int gpu_count() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) return 0;
  return gpus;
}

// A wait no peer answers: the guard releases it after its timeout and names the peer.
TEST(CeCollectives, TheGuardReleasesAWaitAtItsDeadline) {
  if (gpu_count() < 1) GTEST_SKIP() << "needs a GPU";
  cuda_check(cudaSetDevice(0), "selecting GPU 0");
  DeviceBuffer area(kSignalRegionBytes, "a signal area");
  cuda_check(cudaMemset(area.get(), 0, ce_collectives::kSignalWordsBytes), "zeroing the words");
  Stream stream = make_stream("the waiting stream");
  ce_collectives::WaitGuard guard(0, {4, 7}, 0, 0.2);
  guard.watch(area.get());
  ce_collectives::Progress* progress = guard.device_progress();
  kernels::stream_write_value(stream.get(), &progress->begun, 1, CU_STREAM_WRITE_VALUE_DEFAULT, "begin");
  kernels::stream_wait_value(stream.get(), ce_collectives::signal_word(area.get(), 1, 1), 1, CU_STREAM_WAIT_VALUE_EQ,
                             "wait for rank 7");
  kernels::stream_write_value(stream.get(), &progress->ended, 1, CU_STREAM_WRITE_VALUE_DEFAULT, "end");
  EXPECT_TRUE(kernels::finished_within(stream.get(), 10.0)) << "the guard did not release the wait";
  const auto why = guard.stalled();
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("rank 7"), std::string::npos) << *why;
  EXPECT_NE(why->find("rank 4 waited"), std::string::npos) << *why;
  EXPECT_FALSE(guard.stalled().has_value()) << "said once";
}

// Two ranks of a collective case, each on its own GPU, as the case loop sets them up.
class TwoRanks {
 public:
  TwoRanks(const char* method, uint64_t bytes) {
    spec_.method = *parse_method(method);
    spec_.pattern = Pattern::kAllToAll;
    spec_.bytes = bytes;
    spec_.flows = {{0, 1}, {1, 0}};
    if (!testing_support::peer_access_between_gpus_0_and_1()) throw std::runtime_error("GPUs 0 and 1 have no peer access");
    for (int r = 0; r < 2; ++r) {
      cuda_check(cudaSetDevice(r), "selecting a GPU");
      buffers_.emplace_back(2 * bytes + (1 << 20), "a rank's source buffer (input, output)");
      signals_.emplace_back(kSignalRegionBytes, "a rank's signal area");
      cuda_check(cudaMemset(signals_.back().get(), 0, kSignalRegionBytes), "zeroing a signal area");
      // Queued on the legacy stream, which the ranks' non-blocking streams do not wait for.
      cuda_check(cudaDeviceSynchronize(), "zeroing a signal area");
      streams_.push_back(make_stream("a rank's case stream"));
      holder_streams_.push_back(make_stream("a rank's SM holder"));
      engines_.push_back(engine_maker(spec_.method)(spec_));
    }
  }

  std::optional<std::string> unsupported() const {
    for (int r = 0; r < 2; ++r)
      if (auto why = engines_[size_t(r)]->unsupported_reason(r)) return why;
    return std::nullopt;
  }

  Endpoints endpoints(int r, const Flow& f) const {
    Endpoints e;
    e.local_src = buffers_[size_t(r)].get();
    e.peer_src = buffers_[size_t(1 - r)].get();
    e.local_signal_area = signals_[size_t(r)].get();
    e.peer_signal_area = signals_[size_t(1 - r)].get();
    e.flow = f;
    e.rank = r;
    return e;
  }

  // Before a sample: the words reset, each input filled with its seed, each output poisoned.
  void prepare_sample(uint64_t seed) {
    for (int r = 0; r < 2; ++r) {
      cuda_check(cudaSetDevice(r), "selecting a GPU");
      TransferEngine& engine = *engines_[size_t(r)];
      const cudaStream_t s = streams_[size_t(r)].get();
      for (const Flow& f : spec_.flows) engine.before_sample(endpoints(r, f), seed + uint64_t(f.src_rank), s);
      engine.prepare(r, r, spec_.flows);
      engine.fill_source(buffers_[size_t(r)].get(), spec_.bytes, seed + uint64_t(r), s);
      engine.poison_destination(engine.destination_region(endpoints(r, {1 - r, r})), spec_.bytes, 0, s);
      cuda_check(cudaStreamSynchronize(s), "filling and poisoning");
    }
  }

  // `operations` operations of each rank, queued rank after rank (each waits for the other's signals).
  void launch(int operations) {
    for (int op = 0; op < operations; ++op)
      for (int r = 0; r < 2; ++r) {
        cuda_check(cudaSetDevice(r), "selecting a GPU");
        std::vector<Transfer> transfers;
        for (const Flow& f : spec_.flows) {
          transfers.push_back(engines_[size_t(r)]->transfer(Direction::kPush, endpoints(r, f), 0, spec_.bytes));
          transfers.back().index = uint64_t(op);
        }
        engines_[size_t(r)]->launch_fused(transfers, streams_[size_t(r)].get());
      }
  }

  bool finished_within(double deadline_s) {
    bool all = true;
    for (int r = 0; r < 2; ++r) {
      cuda_check(cudaSetDevice(r), "selecting a GPU");
      all = kernels::finished_within(streams_[size_t(r)].get(), deadline_s) && all;
    }
    return all;
  }

  // Each rank's output against the reference, and whether a wait gave up.
  std::vector<std::string> problems() {
    std::vector<std::string> found;
    for (int r = 0; r < 2; ++r) {
      cuda_check(cudaSetDevice(r), "selecting a GPU");
      TransferEngine& engine = *engines_[size_t(r)];
      if (auto why = engine.stalled()) found.push_back("rank " + std::to_string(r) + ": " + *why);
      const Endpoints in = endpoints(r, {1 - r, r});
      if (auto bad = engine.verify(engine.destination_region(in), spec_.bytes, 0, 0, streams_[size_t(r)].get()))
        found.push_back("rank " + std::to_string(r) + ": " + *bad);
    }
    return found;
  }

  cudaStream_t holder_stream(int r) const { return holder_streams_[size_t(r)].get(); }

 private:
  CaseSpec spec_;
  std::vector<DeviceBuffer> buffers_, signals_;
  std::vector<Stream> streams_, holder_streams_;
  std::vector<std::unique_ptr<TransferEngine>> engines_;
};

// "No SM", measured: every SM of both GPUs held by spinning blocks, both operations of both
// collectives (the two slots of signal words) still finish, and every output byte is right.
TEST(CeCollectives, CompleteWithEverySmHeldTwoGpus) {
  ASSERT_EQ(kOwnQueues, 0) << "setting CUDA_DEVICE_MAX_CONNECTIONS";
  if (gpu_count() < 2) GTEST_SKIP() << "needs two GPUs: copies within one GPU may wait for an SM (test_sm_holder)";
  int access = 0;
  cuda_check(cudaDeviceCanAccessPeer(&access, 0, 1), "asking for peer access");
  if (!access) GTEST_SKIP() << "GPUs 0 and 1 have no peer access";
  for (const char* method : {"all_gather_ce", "all_to_all_ce"}) {
    TwoRanks ranks(method, 4 << 20);
    if (auto why = ranks.unsupported()) GTEST_SKIP() << method << ": " << *why;
    ranks.prepare_sample(1234);
    bool finished = false;
    {
      std::vector<std::unique_ptr<kernels::SmHolder>> holders;
      for (int r = 0; r < 2; ++r) {
        cuda_check(cudaSetDevice(r), "selecting a GPU");
        holders.push_back(std::make_unique<kernels::SmHolder>(ranks.holder_stream(r), 5.0, 60.0));
      }
      ranks.launch(2);
      finished = ranks.finished_within(10.0);
      for (const auto& h : holders) EXPECT_TRUE(h->still_holding()) << method << ": a holder block gave up early";
    }  // the holders release their SMs
    EXPECT_TRUE(finished) << method << ": did not finish while every SM was held";
    EXPECT_TRUE(ranks.finished_within(30.0)) << method;
    for (const std::string& p : ranks.problems()) ADD_FAILURE() << method << ": " << p;
  }
}

}  // namespace
