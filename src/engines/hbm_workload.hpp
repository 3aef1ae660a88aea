// The memory-bound workload: a local HBM-to-HBM stream by SM loads and stores, so that HBM
// contention shows apart from SM contention (a GEMM needs SMs; this needs bandwidth).
#pragma once

#include "common/cuda_raii.hpp"
#include "engines/workload.hpp"

namespace p2pbench {

class HbmWorkload final : public Workload {
 public:
  HbmWorkload(uint64_t bytes, int device);
  const char* unit() const override { return "GB/s"; }
  double work_per_launch() const override { return double(bytes_) * 1e-9; }
  void enqueue(cudaStream_t stream) override;
  void poison_result(cudaStream_t stream) override;
  std::optional<std::string> check(cudaStream_t stream) override;
  std::string describe() const override;

 private:
  uint64_t bytes_;
  int blocks_;
  DeviceBuffer src_, dst_, next_chunk_;
};

}  // namespace p2pbench
