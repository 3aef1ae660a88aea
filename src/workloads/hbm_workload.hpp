// The memory-bound workload: a local HBM-to-HBM stream by SM loads and stores, so that HBM
// contention shows apart from SM contention (a GEMM needs SMs; this needs bandwidth).
#pragma once

#include "common/cuda_raii.hpp"
#include "workloads/workload.hpp"
#include "kernels/workload_kernels.hpp"

namespace p2pbench {

class HbmWorkload final : public Workload {
 public:
  // The stream in the build's shape (kernels::default_hbm_stream_shape) unless told otherwise.
  HbmWorkload(uint64_t bytes, int device, const kernels::HbmStreamShape& shape = kernels::default_hbm_stream_shape());
  const char* unit() const override { return "GB/s"; }
  double work_per_launch() const override { return double(bytes_) * 1e-9; }
  // One wave of resident blocks on `sms` SMs (0: all): a grid_stride stream must not leave a
  // tail of blocks waiting for a partition's SMs; the counter layouts need no more.
  void set_sm_target(int sms, cudaStream_t stream) override;
  void enqueue(cudaStream_t stream) override;
  void poison_result(cudaStream_t stream) override;
  std::optional<std::string> check(cudaStream_t stream) override;
  std::string describe() const override;

 private:
  uint64_t bytes_;
  int device_;
  kernels::HbmStreamShape shape_;
  int blocks_;
  DeviceBuffer src_, dst_, next_chunk_;
};

}  // namespace p2pbench
