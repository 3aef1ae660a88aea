#include "kernels/device_caps.hpp"

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"

namespace p2pbench::kernels {

std::optional<std::string> requires_hopper(int device, const std::string& what) {
  int major = 0, minor = 0;
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "querying the compute capability");
  cuda_check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "querying the compute capability");
  if (major >= 9) return std::nullopt;
  return what + " need compute capability 9.0+ (this GPU is " + std::to_string(major) + "." + std::to_string(minor) + ")";
}

}  // namespace p2pbench::kernels
