// What a GPU runs while spinning blocks hold every SM (kernels/sm_holder.hpp): a copy to the host
// is the copy engine's and must finish; each other operation a zero-SM path is made of is tried
// the same way and reported (BESIDE lines), so a path that waits for an SM is found by its part.
#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "kernels/sm_holder.hpp"
#include "kernels/stream_value_ops.hpp"

namespace {

// Each stream its own hardware queue (the driver's default is 8, shared beyond): read when the
// context is created, before the first CUDA call.
const int kOwnQueues = setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);

using namespace p2pbench;

// Whether `op`, queued on a stream of its own while every SM is held, finished within 2 s.
bool runs_beside_the_holder(const std::function<void(cudaStream_t)>& op) {
  Stream holder_stream = make_stream("the SM holder's stream");
  Stream stream = make_stream("the operation's stream");
  bool done = false;
  {
    kernels::SmHolder holder(holder_stream.get(), 5.0, 12.0);
    op(stream.get());
    done = kernels::finished_within(stream.get(), 2.0) && holder.still_holding();
  }
  cuda_check(cudaStreamSynchronize(holder_stream.get()), "the SM holder");
  cuda_check(cudaStreamSynchronize(stream.get()), "the operation");
  return done;
}

// A copy by cudaMemcpyBatchAsync with the hint to overlap with compute (all_gather_ce's own
// chunk): whether the driver then leaves the SMs alone.
void batch_copy(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  cudaMemcpyAttributes attrs{};
  attrs.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attrs.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  void* dsts[] = {dst};
  const void* srcs[] = {src};
  size_t sizes[] = {bytes}, first[] = {0};
  cuda_check(cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attrs, first, 1, s), "batch copy");
}

TEST(SmHolder, TheCopyEngineRunsBesideItAndEachPartIsReported) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no GPU";
  ASSERT_EQ(kOwnQueues, 0);
  cuda_check(cudaSetDevice(0), "GPU 0");
  kernels::require_stream_value_ops();
  const size_t bytes = 1 << 20;
  DeviceBuffer a(bytes, "a"), b(bytes, "b"), words(64, "words");
  void* host = nullptr;
  cuda_check(cudaMallocHost(&host, bytes), "pinned host memory");
  cuda_check(cudaMemset(words.get(), 0, 64), "zeroing the words");
  // Queued on the legacy stream, which the non-blocking streams below do not wait for.
  cuda_check(cudaDeviceSynchronize(), "zeroing the words");
  auto* word = static_cast<uint32_t*>(words.get());
  const std::vector<std::pair<const char*, std::function<void(cudaStream_t)>>> ops = {
      {"copy to pinned host 1 MiB", [&](cudaStream_t s) {
         cuda_check(cudaMemcpyAsync(host, a.get(), bytes, cudaMemcpyDeviceToHost, s), "d2h"); }},
      {"copy within the GPU 1 MiB", [&](cudaStream_t s) {
         cuda_check(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, s), "d2d"); }},
      {"copy within the GPU 4 B", [&](cudaStream_t s) {
         cuda_check(cudaMemcpyAsync(word + 1, word, 4, cudaMemcpyDeviceToDevice, s), "d2d 4 B"); }},
      {"batch copy within the GPU 1 MiB, prefer overlap", [&](cudaStream_t s) { batch_copy(b.get(), a.get(), bytes, s); }},
      {"cuStreamWriteValue32", [&](cudaStream_t s) {
         kernels::stream_write_value(s, word + 2, 1, CU_STREAM_WRITE_VALUE_DEFAULT, "write"); }},
      {"cuStreamWaitValue32 (already true)", [&](cudaStream_t s) {
         kernels::stream_wait_value(s, word + 3, 0, CU_STREAM_WAIT_VALUE_EQ, "wait"); }},
  };
  bool control = false;
  for (const auto& [name, op] : ops) {
    const bool beside = runs_beside_the_holder(op);
    std::printf("BESIDE %-50s %s\n", name, beside ? "finished while every SM was held" : "waited for an SM");
    if (std::string(name).rfind("copy to pinned host", 0) == 0) control = beside;
  }
  cudaFreeHost(host);
  EXPECT_TRUE(control) << "a copy to the host waited: the holder blocks more than SMs";
}

}  // namespace
