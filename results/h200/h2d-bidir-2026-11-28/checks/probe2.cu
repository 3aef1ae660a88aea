// Does a spin kernel polling host memory see a host store while a d2h (or h2d) copy saturates PCIe?
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <thread>
#define CK(x) do { cudaError_t err_ = (x); if (err_) { printf("%s: %s\n", #x, cudaGetErrorString(err_)); exit(1);} } while (0)
__global__ void spin(volatile int* flag) { while (*flag == 0) {} }
int main() {
  const size_t S = 1ull << 30; const int N = 8;
  void *h, *d; int *fb, *ft;
  CK(cudaHostAlloc(&h, S, 0)); CK(cudaMalloc(&d, S)); memset(h, 1, S); CK(cudaMemset(d, 2, S));
  CK(cudaHostAlloc((void**)&fb, 4, cudaHostAllocMapped)); CK(cudaHostAlloc((void**)&ft, 4, cudaHostAllocMapped));
  cudaStream_t st, sb; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  cudaEvent_t b0, b1, t0; for (auto* ev : {&b0, &b1, &t0}) CK(cudaEventCreate(ev));
  for (int dir = 0; dir < 2; ++dir) for (int rep = 0; rep < 3; ++rep) {
    *fb = 0; *ft = 0; CK(cudaDeviceSynchronize());
    spin<<<1, 1, 0, sb>>>(fb); CK(cudaEventRecord(b0, sb));
    for (int i = 0; i < N; ++i) CK(dir == 0 ? cudaMemcpyAsync(h, d, S, cudaMemcpyDefault, sb) : cudaMemcpyAsync(d, h, S, cudaMemcpyDefault, sb));
    CK(cudaEventRecord(b1, sb));
    spin<<<1, 1, 0, st>>>(ft); CK(cudaEventRecord(t0, st));
    *fb = 1; std::this_thread::sleep_for(std::chrono::milliseconds(5)); *ft = 1;  // release the polling kernel 5 ms into the copies
    CK(cudaDeviceSynchronize());
    float a, b; CK(cudaEventElapsedTime(&a, b0, t0)); CK(cudaEventElapsedTime(&b, b0, b1));
    printf("%s copies running: spin kernel saw the store %.3f ms after the copies began (released at ~5 ms); copies ended at %.3f ms\n",
           dir == 0 ? "d2h" : "h2d", a, b);
  }
  return 0;
}
