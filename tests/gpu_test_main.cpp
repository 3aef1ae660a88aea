// main() of every GPU test: skips visibly (exit 77, CTest "Skipped") where no GPU is visible.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "common/device_connections.hpp"

int main(int argc, char** argv) {
  p2pbench::request_device_connections();
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA GPU visible (%s). GPU tests run on a GPU node: scripts/gpu-check.sh\n",
                err != cudaSuccess ? cudaGetErrorName(err) : "0 devices");
    return 77;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
