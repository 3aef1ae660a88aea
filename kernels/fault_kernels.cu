#include "kernels/fault_kernels.hpp"

#include "common/cuda_check.hpp"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {

namespace {

__global__ void illegal_address_kernel(uint32_t* nowhere) { *nowhere = 0xdeadbeefu; }

__global__ void hang_kernel(uint64_t duration_ns) {
  const uint64_t t0 = ptx::globaltimer_ns();
  while (ptx::globaltimer_ns() - t0 < duration_ns) {
  }
}

}  // namespace

void enqueue_illegal_address(cudaStream_t stream) {
  // An address no allocation covers: the first page is never mapped.
  illegal_address_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<uint32_t*>(uintptr_t(16)));
  cuda_check_launch("the illegal-address fault kernel");
}

void enqueue_hang(double seconds, cudaStream_t stream) {
  hang_kernel<<<1, 1, 0, stream>>>(uint64_t(seconds * 1e9));
  cuda_check_launch("the hang fault kernel");
}

void enqueue_delay(uint64_t ns, cudaStream_t stream) {
  hang_kernel<<<1, 1, 0, stream>>>(ns);
  cuda_check_launch("the injected delay kernel");
}

}  // namespace p2pbench::kernels
