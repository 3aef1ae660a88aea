// A workload that runs beside a transfer: the bf16 GEMM or the HBM stream. Like a
// TransferEngine it only enqueues work; who waits for whom is the interference procedure's business (measure/interference_cases.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>

#include "config/interference_config.hpp"

namespace p2pbench {

class Workload {
 public:
  virtual ~Workload() = default;
  // The figure's unit ("TFLOP/s", or "GB/s" with 1 GB = 1e9 bytes copied) and the work of one
  // launch in that unit times seconds (TFLOP, GB): figure = launches * work / seconds.
  virtual const char* unit() const = 0;
  virtual double work_per_launch() const = 0;
  // The SMs the next launches may use (0: the whole GPU), so that a kernel that sizes its
  // grid by the SM count does not leave a tail of blocks waiting for a partition's few SMs.
  // `stream` is where the launches will go (the GEMM times its algorithms there).
  virtual void set_sm_target(int /*sms*/, cudaStream_t /*stream*/) {}
  // Enqueues one launch (capturable, any stream of the device, green contexts included).
  virtual void enqueue(cudaStream_t stream) = 0;
  // Overwrites the result with a poison, so a launch that wrote nothing is caught.
  virtual void poison_result(cudaStream_t stream) = 0;
  // Checks the result of the launches since the last poison against the reference (the GEMM
  // also against its first verified result); nullopt when right, else what differs.
  virtual std::optional<std::string> check(cudaStream_t stream) = 0;
  // What the figure is of, for the results' meta ("gemm bf16 8192x8192x8192, algo 2 of 8").
  virtual std::string describe() const = 0;
};

// The workload named `name` ("gemm" or "hbm") on the current device, set up and checked once.
std::unique_ptr<Workload> make_workload(const std::string& name, const InterferenceSettings& settings, int device);

}  // namespace p2pbench
