// Checked CUDA runtime calls: every failure names the action that failed.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "common/errors.hpp"

namespace p2pbench {

// A CUDA runtime error. `sticky` errors leave the context unusable: the run must end.
class CudaError : public RuntimeFailure {
 public:
  CudaError(cudaError_t code, const std::string& what);
  cudaError_t code() const { return code_; }
  bool sticky() const;

 private:
  cudaError_t code_;
};

// Throws CudaError("<what>: <error name> (<error string>)") unless err is cudaSuccess.
void cuda_check(cudaError_t err, const std::string& what);

// Checks the launch that was just enqueued (configuration errors surface here).
void cuda_check_launch(const std::string& what);

// The calling thread's current GPU (cudaGetDevice, checked).
int current_device();
// The SMs of `device` (checked).
int sm_count(int device);

}  // namespace p2pbench
