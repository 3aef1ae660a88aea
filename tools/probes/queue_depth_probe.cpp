// How many commands one stream takes behind a closed gate before the host blocks: the depth of the
// GPU's command queue, which bounds what a sample may queue behind p2pbench's start gate (the
// interference phase allows 256 commands, the copy-engine put with signal 64 chunks, both chosen
// without this figure).
//
// For each kind of command, commands are queued one by one behind a stream wait on a closed gate,
// each call timed on the host, until --most are queued. A watchdog thread opens the gate from a
// stream of its own after --open-after seconds, so a blocked call returns. The first call that
// took longer than half of --open-after was blocked: the commands before it are the depth.
//
// Kinds: 4-byte stream writes, 4 KiB copies, and cudaMemcpyBatchAsync calls of 16 and of 64 such
// copies (does a batch take a place in the queue per call or per copy?).
//
// Usage: p2pbench-probe-queue-depth [--most N] [--open-after SECONDS]
// One JSON object per kind on stdout: kind, queued (before the host blocked; null: none blocked
// up to --most), the blocked call's seconds.
#include <cuda.h>  // CU_STREAM_* flags
#include <cuda_runtime.h>  // cudaMalloc of typed pointers

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/device_connections.hpp"
#include "kernels/stream_value_ops.hpp"

namespace {

using p2pbench::kernels::stream_wait_value;
using p2pbench::kernels::stream_write_value;
using Clock = std::chrono::steady_clock;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

struct Options {
  size_t most = 100000;
  double open_after_s = 4.0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
    if (a == "--most") o.most = std::stoull(argv[++i]);
    else if (a == "--open-after") o.open_after_s = std::stod(argv[++i]);
    else throw std::invalid_argument("unknown argument " + a);
  }
  return o;
}

constexpr size_t kCopyBytes = 4096;
constexpr size_t kMostBatch = 64;

struct Words {
  uint32_t* gate = nullptr;
  uint32_t* scratch = nullptr;  // what the stream writes go to
  char* src = nullptr;          // 4 KiB copies from here (kMostBatch of them)
  char* dst = nullptr;
};

// `n` copies of 4 KiB in one cudaMemcpyBatchAsync, in stream order.
void batch(const Words& w, size_t n, cudaStream_t st) {
  void* dsts[kMostBatch];
  const void* srcs[kMostBatch];
  size_t sizes[kMostBatch];
  for (size_t i = 0; i < n; ++i) {
    dsts[i] = w.dst + i * kCopyBytes;
    srcs[i] = w.src + i * kCopyBytes;
    sizes[i] = kCopyBytes;
  }
  cudaMemcpyAttributes attr = {};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  size_t attr_index = 0;
  check(cudaMemcpyBatchAsync(dsts, srcs, sizes, n, &attr, &attr_index, 1, st), "a queued batch");
}

// Queues `kind` commands behind a closed gate until one blocks the host or `most` are queued;
// prints the figure, then lets everything run out.
void measure(const std::string& kind, const Words& w, const Options& o, cudaStream_t st, cudaStream_t opener) {
  check(cudaMemset(w.gate, 0, sizeof(uint32_t)), "closing the gate");
  check(cudaDeviceSynchronize(), "before queueing");
  stream_wait_value(st, w.gate, 1, CU_STREAM_WAIT_VALUE_EQ, "the gate");
  std::thread watchdog([&] {  // opens the gate in any case, so that nothing stays blocked
    std::this_thread::sleep_for(std::chrono::duration<double>(o.open_after_s));
    stream_write_value(opener, w.gate, 1, CU_STREAM_WRITE_VALUE_DEFAULT, "opening the gate");
  });
  long queued = -1;
  double blocked_s = 0;
  for (size_t i = 0; i < o.most; ++i) {
    const auto t0 = Clock::now();
    if (kind == "stream_write")
      stream_write_value(st, w.scratch, uint32_t(i), CU_STREAM_WRITE_VALUE_DEFAULT, "a queued write");
    else if (kind == "memcpy_4KiB")
      check(cudaMemcpyAsync(w.dst, w.src, kCopyBytes, cudaMemcpyDeviceToDevice, st), "a queued copy");
    else
      batch(w, kind == "batch_16x4KiB" ? 16 : kMostBatch, st);
    const double took = std::chrono::duration<double>(Clock::now() - t0).count();
    if (took > o.open_after_s / 2) {
      queued = long(i);
      blocked_s = took;
      break;
    }
  }
  watchdog.join();
  check(cudaStreamSynchronize(st), "the queued commands");
  std::printf("{\"kind\": \"%s\", \"queued\": %s, \"blocked_call_s\": %.3f, \"most\": %zu}\n", kind.c_str(),
              queued < 0 ? "null" : std::to_string(queued).c_str(), blocked_s, o.most);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  p2pbench::request_device_connections();  // the watchdog's stream must not share the gated one's queue
  const Options o = parse(argc, argv);
  check(cudaSetDevice(0), "cudaSetDevice");
  Words w;
  check(cudaMalloc(&w.gate, 4), "cudaMalloc");
  check(cudaMalloc(&w.scratch, 4), "cudaMalloc");
  check(cudaMalloc(&w.src, kMostBatch * kCopyBytes), "cudaMalloc");
  check(cudaMalloc(&w.dst, kMostBatch * kCopyBytes), "cudaMalloc");
  cudaStream_t st, opener;
  check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  check(cudaStreamCreateWithFlags(&opener, cudaStreamNonBlocking), "stream");
  for (const char* kind : {"stream_write", "memcpy_4KiB", "batch_16x4KiB", "batch_64x4KiB"}) measure(kind, w, o, st, opener);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "p2pbench-probe-queue-depth: %s\n", e.what());
  return 1;
}
