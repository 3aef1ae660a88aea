#include "kernels/sm_holder.hpp"

#include <chrono>
#include <string>
#include <thread>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {
namespace {

constexpr int kHolderThreads = 1024;
constexpr int kBlocksPerSm = 2;  // 2048 threads: every thread slot of an SM

struct HolderWords {
  uint32_t started;
  uint32_t release;
  uint32_t gave_up;
};

// Thread 0 of each block counts itself in, then the block spins until released or its limit.
__global__ void __launch_bounds__(kHolderThreads, kBlocksPerSm) hold_sm(HolderWords* w, uint64_t limit_ns) {
  if (threadIdx.x == 0) {
    atomicAdd_system(&w->started, 1u);
    const uint64_t t0 = ptx::globaltimer_ns();
    while (ptx::ld_acquire_sys(&w->release) == 0) {
      if (ptx::globaltimer_ns() - t0 > limit_ns) {
        atomicAdd_system(&w->gave_up, 1u);
        break;
      }
      __nanosleep(1000);
    }
  }
  __syncthreads();  // every thread of the block stays resident until thread 0 is done
}

}  // namespace

bool finished_within(cudaStream_t stream, double deadline_s) {
  const auto t0 = std::chrono::steady_clock::now();
  cudaError_t state = cudaErrorNotReady;
  while ((state = cudaStreamQuery(stream)) == cudaErrorNotReady &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < deadline_s)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  if (state != cudaErrorNotReady) cuda_check(state, "work beside the SM holder");
  return state == cudaSuccess;
}

SmHolder::SmHolder(cudaStream_t stream, double start_deadline_s, double hold_limit_s)
    : words_(sizeof(HolderWords), "the SM holder's words") {
  int device = 0, sms = 0;
  cuda_check(cudaGetDevice(&device), "querying the current GPU for the SM holder");
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "querying the SM count");
  blocks_ = sms * kBlocksPerSm;
  auto* host = static_cast<volatile HolderWords*>(words_.host());
  host->started = host->release = host->gave_up = 0;
  hold_sm<<<blocks_, kHolderThreads, 0, stream>>>(static_cast<HolderWords*>(words_.device()),
                                            uint64_t(hold_limit_s * 1e9));
  cuda_check_launch("the SM holder");
  const auto t0 = std::chrono::steady_clock::now();
  while (host->started < uint32_t(blocks_)) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > start_deadline_s) {
      const uint32_t started = host->started;
      release();
      throw RuntimeFailure("the SM holder: " + std::to_string(started) + " of " + std::to_string(blocks_) +
                           " blocks started within " + std::to_string(start_deadline_s) + " s");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

SmHolder::~SmHolder() { release(); }

void SmHolder::release() {
  if (released_) return;
  static_cast<volatile HolderWords*>(words_.host())->release = 1;
  released_ = true;
}

bool SmHolder::still_holding() const {
  return !released_ && static_cast<volatile HolderWords*>(words_.host())->gave_up == 0;
}

}  // namespace p2pbench::kernels
