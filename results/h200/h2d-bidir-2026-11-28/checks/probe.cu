// h2d timed while d2h (2x bytes) runs beside: stream vs graph issue, event timeline.
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t err_ = (x); if (err_) { printf("%s: %s\n", #x, cudaGetErrorString(err_)); exit(1);} } while (0)
__global__ void spin(volatile int* flag) { while (*flag == 0) {} }
int main() {
  const size_t S = 512ull << 20; const int N = 16;
  void *h1, *h2, *d1, *d2; int* flag;
  CK(cudaHostAlloc(&h1, S, 0)); CK(cudaHostAlloc(&h2, 2 * S, 0)); CK(cudaMalloc(&d1, S)); CK(cudaMalloc(&d2, 2 * S));
  CK(cudaHostAlloc((void**)&flag, 4, cudaHostAllocMapped));
  memset(h1, 1, S); memset(h2, 2, 2 * S); CK(cudaMemset(d1, 3, S)); CK(cudaMemset(d2, 4, 2 * S));
  cudaStream_t st, sb; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  cudaEvent_t base, t0, t1, b0, b1; for (auto* ev : {&base, &t0, &t1, &b0, &b1}) CK(cudaEventCreate(ev));
  auto capture = [&](cudaStream_t s, void* dst, void* src, size_t b, int n) {
    cudaGraph_t g; cudaGraphExec_t x; CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < n; ++i) CK(cudaMemcpyAsync(dst, src, b, cudaMemcpyDefault, s));
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&x, g, 0)); return x; };
  cudaGraphExec_t gt = capture(st, d1, h1, S, N), gb = capture(sb, h2, d2, 2 * S, N + 1);
  const char* names[] = {"stream/stream", "graph/stream", "stream/graph", "graph/graph", "alone(stream)", "alone(graph)"};
  for (int rep = 0; rep < 3; ++rep)
  for (int mode = 0; mode < 6; ++mode) {
    bool tg = mode == 1 || mode == 3 || mode == 5, bg = mode == 2 || mode == 3, beside = mode < 4;
    *flag = 0; CK(cudaDeviceSynchronize());
    spin<<<1, 1, 0, st>>>(flag); spin<<<1, 1, 0, sb>>>(flag);
    CK(cudaEventRecord(base, st)); CK(cudaStreamWaitEvent(sb, base));
    if (beside) { CK(cudaEventRecord(b0, sb));
      if (bg) CK(cudaGraphLaunch(gb, sb)); else for (int i = 0; i < N + 1; ++i) CK(cudaMemcpyAsync(h2, d2, 2 * S, cudaMemcpyDefault, sb));
      CK(cudaEventRecord(b1, sb)); }
    CK(cudaEventRecord(t0, st));
    if (tg) CK(cudaGraphLaunch(gt, st)); else for (int i = 0; i < N; ++i) CK(cudaMemcpyAsync(d1, h1, S, cudaMemcpyDefault, st));
    CK(cudaEventRecord(t1, st));
    *flag = 1; CK(cudaDeviceSynchronize());
    float t = 0, tb0 = 0, tb1 = 0, tt0 = 0; CK(cudaEventElapsedTime(&t, t0, t1)); CK(cudaEventElapsedTime(&tt0, base, t0));
    if (beside) { CK(cudaEventElapsedTime(&tb0, base, b0)); CK(cudaEventElapsedTime(&tb1, base, b1)); }
    printf("%-14s h2d %6.2f GB/s (%.1f..%.1f ms)  beside d2h %.1f..%.1f ms %6.2f GB/s\n", names[mode], N * S / (t * 1e6), tt0, tt0 + t,
           tb0, tb1, beside ? (N + 1) * 2 * S / ((tb1 - tb0) * 1e6) : 0.0);
  }
  return 0;
}
