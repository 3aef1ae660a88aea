#include "gpu_peer_access.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "common/cuda_check.hpp"

namespace p2pbench::testing_support {
namespace {

bool enable_both_ways() {
  int count = 0;
  cuda_check(cudaGetDeviceCount(&count), "counting devices");
  if (count < 2) return false;
  int ab = 0, ba = 0;
  cuda_check(cudaDeviceCanAccessPeer(&ab, 0, 1), "asking whether GPU 0 can access GPU 1");
  cuda_check(cudaDeviceCanAccessPeer(&ba, 1, 0), "asking whether GPU 1 can access GPU 0");
  if (ab == 0 || ba == 0) return false;
  for (int d = 0; d < 2; ++d) {
    cuda_check(cudaSetDevice(d), "selecting GPU " + std::to_string(d));
    cuda_check(cudaDeviceEnablePeerAccess(1 - d, 0), "enabling peer access from GPU " + std::to_string(d));
  }
  return true;
}

}  // namespace

bool peer_access_between_gpus_0_and_1() {
  static const bool enabled = enable_both_ways();  // thread-safe, once per process
  cuda_check(cudaSetDevice(0), "selecting GPU 0");
  return enabled;
}

}  // namespace p2pbench::testing_support
