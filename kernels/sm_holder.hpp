// Every SM of a GPU taken by spinning blocks, so that work queued meanwhile either runs without
// an SM (the copy engine, stream memory operations) or waits: a test of "no SM" that measures
// it instead of assuming it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/cuda_raii.hpp"

namespace p2pbench::kernels {

// Whether `stream`'s work finished within `deadline_s` (polled; it may still run after a false).
// Throws CudaFailure where the stream failed.
bool finished_within(cudaStream_t stream, double deadline_s);

class SmHolder {
 public:
  // Launches on `stream` of the current device two blocks of 1024 threads per SM (every thread
  // slot of an SM of compute capability 7.0 and later, so no other block fits) and waits until
  // all have started, at most `start_deadline_s`. Each block spins until release() or until
  // `hold_limit_s` of its own time have passed (no wait without a deadline). Throws
  // RuntimeFailure where the blocks did not all start (another kernel held an SM).
  SmHolder(cudaStream_t stream, double start_deadline_s, double hold_limit_s);
  SmHolder(const SmHolder&) = delete;
  SmHolder& operator=(const SmHolder&) = delete;
  ~SmHolder();  // releases the blocks

  // Lets every block end (their stream then drains).
  void release();
  // Whether the blocks still held every SM when asked: none had given up on its hold limit.
  bool still_holding() const;
  int blocks() const { return blocks_; }

 private:
  MappedHostBuffer words_;  // started, release, gave_up (sm_holder.cu)
  int blocks_ = 0;
  bool released_ = false;
};

}  // namespace p2pbench::kernels
