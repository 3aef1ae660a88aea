// Why a 1 GiB device-local copy runs at ~1380 GB/s in p2pbench and ~2115 in nvbandwidth.
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
int main() {
  const size_t max = size_t(1) << 30;
  void *a, *b;
  CK(cudaMalloc(&a, max)); CK(cudaMalloc(&b, max));
  CK(cudaMemset(a, 1, max)); CK(cudaMemset(b, 2, max));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  const int reps = 8;
  for (size_t n : {size_t(256) << 20, size_t(512) << 20, max}) {
    for (int kind : {0, 1}) {
      cudaMemcpyKind k = kind ? cudaMemcpyDeviceToDevice : cudaMemcpyDefault;
      for (int w = 0; w < 3; ++w) CK(cudaMemcpyAsync(b, a, n, k, s));
      CK(cudaEventRecord(e0, s));
      for (int i = 0; i < reps; ++i) CK(cudaMemcpyAsync(b, a, n, k, s));
      CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
      printf("%4zu MiB %s stream: %.1f GB/s\n", n >> 20, kind ? "D2D    " : "Default", n * reps / (ms * 1e6));
      cudaGraph_t g; cudaGraphExec_t x;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < reps; ++i) CK(cudaMemcpyAsync(b, a, n, k, s));
      CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&x, g, 0));
      CK(cudaGraphLaunch(x, s)); CK(cudaStreamSynchronize(s));
      CK(cudaEventRecord(e0, s)); CK(cudaGraphLaunch(x, s)); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
      CK(cudaEventElapsedTime(&ms, e0, e1));
      printf("%4zu MiB %s graph:  %.1f GB/s\n", n >> 20, kind ? "D2D    " : "Default", n * reps / (ms * 1e6));
      cudaGraphExecDestroy(x); cudaGraphDestroy(g);
    }
  }
  return 0;
}
