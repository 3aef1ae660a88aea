// Where a copy-engine put with signal spends its time: the same chunks moved by the copy engine
// with each way of ordering a signal behind them, timed with CUDA events, every command queued on
// the GPU before a start gate opens (so the host's enqueue cost is not in the figure, as in the
// case loop's captured samples).
//
// Usage: p2pbench-probe-ce-signal [--dst-device D] [--chunk-bytes B[,B...]] [--chunks N] [--reps R]
//                                 [--variant NAME] [--list]
// --variant runs one variant (a variant whose commands never finish ends the process after 10 s,
// exit 3: run each in a process of its own to survive one); --list prints the variants' names.
// Source on device 0, destination on device D (default: 1 where a second GPU is visible, else 0:
// a copy within one GPU, which shows the commands' cost but is no P2P figure). One JSON object per
// line on stdout: variant, chunk bytes, chunks, median and spread of the whole transfer's time,
// microseconds per chunk and GB/s (1e9 bytes per second).
#include <cuda.h>  // types only: the driver's functions come through driver_entry_point
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/device_connections.hpp"
#include "common/driver_entry_point.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(int r, const char* what) {
  if (r != CUDA_SUCCESS) throw std::runtime_error(std::string(what) + ": CUresult " + std::to_string(r));
}

using WaitWrite = int (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
using BatchMemOp = int (*)(CUstream, unsigned, CUstreamBatchMemOpParams*, unsigned);

struct Driver {
  WaitWrite wait = p2pbench::driver_entry_point<WaitWrite>("cuStreamWaitValue32", 12000);
  WaitWrite write = p2pbench::driver_entry_point<WaitWrite>("cuStreamWriteValue32", 12000);
  BatchMemOp batch = p2pbench::driver_entry_point<BatchMemOp>("cuStreamBatchMemOp", 12000);
};

CUdeviceptr ptr(const void* p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); }

// The buffers of one probe: chunks of `src` to `dst`, a word per chunk for signals, a word that is
// always zero (the credit a wait finds free), a word of ones (a signal's source for a copy).
struct Buffers {
  char* src = nullptr;
  char* dst = nullptr;
  uint32_t* signals = nullptr;
  uint32_t* zero = nullptr;
  uint32_t* ones = nullptr;
  uint32_t* busy = nullptr;
  uint32_t* gate = nullptr;
};

struct Shape {
  size_t chunk = 0;
  size_t chunks = 0;
};

// Streams forked from the timed stream and joined back to it: the copy streams of the multi-stream
// variants, the signal stream of the split ones, and an event per chunk (what a signal waits for).
struct Lanes {
  std::vector<cudaStream_t> copies;  // kLanes streams
  cudaStream_t signals = nullptr;
  std::vector<cudaEvent_t> chunk_done;  // one per chunk
  cudaEvent_t fork = nullptr;
  std::vector<cudaEvent_t> joins;  // one per forked stream
};
constexpr size_t kLanes = 8;

using Variant = std::function<void(const Driver&, const Buffers&, const Shape&, const Lanes&, cudaStream_t)>;

void copy_chunk(const Buffers& b, size_t k, size_t chunk, cudaStream_t s) {
  check(cudaMemcpyAsync(b.dst + k * chunk, b.src + k * chunk, chunk, cudaMemcpyDeviceToDevice, s), "chunk copy");
}
void signal_write(const Driver& d, const Buffers& b, size_t k, unsigned flags, cudaStream_t s) {
  check(d.write(s, ptr(b.signals + k), 1, flags), "cuStreamWriteValue32 signal");
}

void fork_to(const Lanes& l, const std::vector<cudaStream_t>& streams, cudaStream_t st) {
  check(cudaEventRecord(l.fork, st), "fork record");
  for (cudaStream_t f : streams) check(cudaStreamWaitEvent(f, l.fork, 0), "fork wait");
}
void join_from(const Lanes& l, const std::vector<cudaStream_t>& streams, cudaStream_t st) {
  for (size_t i = 0; i < streams.size(); ++i) {
    check(cudaEventRecord(l.joins[i], streams[i]), "join record");
    check(cudaStreamWaitEvent(st, l.joins[i], 0), "join wait");
  }
}

// The chunks over `lanes` copy streams (chunk k on stream k % lanes). signal: "" none, "write" a
// stream write behind each chunk on its own copy stream ("credit+write": after a credit waited for
// and taken before it, as put_signal_ce does), "split" a stream write per chunk, in
// chunk order, on a signal stream that waits for the chunk's event (the copy streams never wait
// for a signal).
void lanes_variant(const Driver& d, const Buffers& b, const Shape& s, const Lanes& l, cudaStream_t st,
                   size_t lanes, const std::string& signal) {
  std::vector<cudaStream_t> streams(l.copies.begin(), l.copies.begin() + long(lanes));
  if (signal == "split") streams.push_back(l.signals);
  fork_to(l, streams, st);
  for (size_t k = 0; k < s.chunks; ++k) {
    cudaStream_t c = streams[k % lanes];
    if (signal == "credit+write") {  // put_signal_ce's shape: a credit waited for and taken per chunk
      check(d.wait(c, ptr(b.zero), 0, CU_STREAM_WAIT_VALUE_EQ), "credit wait");
      check(d.write(c, ptr(b.busy + k), 1, CU_STREAM_WRITE_VALUE_DEFAULT), "credit take");
    }
    copy_chunk(b, k, s.chunk, c);
    if (signal == "write" || signal == "credit+write") signal_write(d, b, k, CU_STREAM_WRITE_VALUE_DEFAULT, c);
    if (signal == "split") {
      check(cudaEventRecord(l.chunk_done[k], c), "chunk event");
      check(cudaStreamWaitEvent(l.signals, l.chunk_done[k], 0), "signal waits for its chunk");
      signal_write(d, b, k, CU_STREAM_WRITE_VALUE_DEFAULT, l.signals);
    }
  }
  join_from(l, streams, st);
}

// Chunks first .. first + n - 1 in one cudaMemcpyBatchAsync call, ordered after the stream's
// earlier work.
void batch_copy(const Buffers& b, size_t first, size_t n, size_t chunk, cudaStream_t st) {
  std::vector<void*> dsts(n);
  std::vector<const void*> srcs(n);
  std::vector<size_t> sizes(n, chunk);
  for (size_t i = 0; i < n; ++i) {
    dsts[i] = b.dst + (first + i) * chunk;
    srcs[i] = b.src + (first + i) * chunk;
  }
  cudaMemcpyAttributes attr = {};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  size_t attr_index = 0;
  check(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), n, &attr, &attr_index, 1, st), "cudaMemcpyBatchAsync");
}

// Every way of ordering the signals behind the chunks that the driver offers.
std::vector<std::pair<std::string, Variant>> variants() {
  std::vector<std::pair<std::string, Variant>> v;
  v.push_back({"bulk", [](const Driver&, const Buffers& b, const Shape& s, const Lanes&, cudaStream_t st) {
                 check(cudaMemcpyAsync(b.dst, b.src, s.chunk * s.chunks, cudaMemcpyDeviceToDevice, st), "bulk copy");
               }});
  v.push_back({"copies", [](const Driver&, const Buffers& b, const Shape& s, const Lanes&, cudaStream_t st) {
                 for (size_t k = 0; k < s.chunks; ++k) copy_chunk(b, k, s.chunk, st);
               }});
  v.push_back({"copy+write", [](const Driver& d, const Buffers& b, const Shape& s, const Lanes&, cudaStream_t st) {
                 for (size_t k = 0; k < s.chunks; ++k) {
                   copy_chunk(b, k, s.chunk, st);
                   signal_write(d, b, k, CU_STREAM_WRITE_VALUE_DEFAULT, st);
                 }
               }});
  v.push_back({"copy+write_nobarrier", [](const Driver& d, const Buffers& b, const Shape& s, const Lanes&, cudaStream_t st) {
                 for (size_t k = 0; k < s.chunks; ++k) {
                   copy_chunk(b, k, s.chunk, st);
                   signal_write(d, b, k, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, st);
                 }
               }});
  v.push_back({"copy+signal_copy", [](const Driver&, const Buffers& b, const Shape& s, const Lanes&, cudaStream_t st) {
                 for (size_t k = 0; k < s.chunks; ++k) {
                   copy_chunk(b, k, s.chunk, st);
                   check(cudaMemcpyAsync(b.signals + k, b.ones, 4, cudaMemcpyDeviceToDevice, st), "signal copy");
                 }
               }});
  v.push_back({"credit+copy+write", [](const Driver& d, const Buffers& b, const Shape& s, const Lanes&, cudaStream_t st) {
                 for (size_t k = 0; k < s.chunks; ++k) {  // today's protocol: wait, take, copy, signal
                   check(d.wait(st, ptr(b.zero), 0, CU_STREAM_WAIT_VALUE_EQ), "credit wait");
                   check(d.write(st, ptr(b.busy + k), 1, CU_STREAM_WRITE_VALUE_DEFAULT), "credit take");
                   copy_chunk(b, k, s.chunk, st);
                   signal_write(d, b, k, CU_STREAM_WRITE_VALUE_DEFAULT, st);
                 }
               }});
  v.push_back({"credit_batched+copy+write", [](const Driver& d, const Buffers& b, const Shape& s, const Lanes&, cudaStream_t st) {
                 for (size_t k = 0; k < s.chunks; ++k) {  // the wait and the take as one batch
                   CUstreamBatchMemOpParams ops[2] = {};
                   ops[0].waitValue = {CU_STREAM_MEM_OP_WAIT_VALUE_32, ptr(b.zero), {0}, CU_STREAM_WAIT_VALUE_EQ, 0};
                   ops[1].writeValue = {CU_STREAM_MEM_OP_WRITE_VALUE_32, ptr(b.busy + k), {1}, 0, 0};
                   check(d.batch(st, 2, ops, 0), "cuStreamBatchMemOp credit");
                   copy_chunk(b, k, s.chunk, st);
                   signal_write(d, b, k, CU_STREAM_WRITE_VALUE_DEFAULT, st);
                 }
               }});
  for (size_t group : {4, 16}) {
    v.push_back({"group" + std::to_string(group) + "+write",
                 [group](const Driver& d, const Buffers& b, const Shape& s, const Lanes&, cudaStream_t st) {
                   for (size_t k = 0; k < s.chunks; ++k) {
                     copy_chunk(b, k, s.chunk, st);
                     if ((k + 1) % group == 0 || k + 1 == s.chunks) signal_write(d, b, k, CU_STREAM_WRITE_VALUE_DEFAULT, st);
                   }
                 }});
  }
  // cudaMemcpyBatchAsync: `group` chunks in one call, then one signal for the group ("+write") or
  // a signal per chunk of it, all behind the whole batch ("+writes": the receiver still learns of
  // each chunk, a batch later at most).
  for (size_t group : {4, 16, 64}) {
    for (bool each : {false, true}) {
      v.push_back({"batch" + std::to_string(group) + (each ? "+writes" : "+write"),
                   [group, each](const Driver& d, const Buffers& b, const Shape& s, const Lanes&, cudaStream_t st) {
                     for (size_t first = 0; first < s.chunks; first += group) {
                       const size_t n = std::min(group, s.chunks - first);
                       batch_copy(b, first, n, s.chunk, st);
                       for (size_t k = each ? first : first + n - 1; k < first + n; ++k)
                         signal_write(d, b, k, CU_STREAM_WRITE_VALUE_DEFAULT, st);
                     }
                   }});
    }
  }
  // The batches on one stream, a signal per chunk on a stream of its own behind each batch's event:
  // the signals' cost overlaps the next batch's copies.
  for (size_t group : {4, 16}) {
    v.push_back({"batch" + std::to_string(group) + "+split_writes",
                 [group](const Driver& d, const Buffers& b, const Shape& s, const Lanes& l, cudaStream_t st) {
                   const std::vector<cudaStream_t> streams{l.copies[0], l.signals};
                   fork_to(l, streams, st);
                   for (size_t first = 0; first < s.chunks; first += group) {
                     const size_t n = std::min(group, s.chunks - first);
                     batch_copy(b, first, n, s.chunk, l.copies[0]);
                     check(cudaEventRecord(l.chunk_done[first], l.copies[0]), "batch event");
                     check(cudaStreamWaitEvent(l.signals, l.chunk_done[first], 0), "signals wait for their batch");
                     for (size_t k = first; k < first + n; ++k) signal_write(d, b, k, CU_STREAM_WRITE_VALUE_DEFAULT, l.signals);
                   }
                   join_from(l, streams, st);
                 }});
  }
  for (size_t lanes : {size_t{1}, size_t{2}, size_t{4}, kLanes}) {
    const std::string on = lanes == 1 ? "" : std::to_string(lanes) + "streams";
    if (lanes > 1) {
      v.push_back({"copies_" + on, [lanes](const Driver& d, const Buffers& b, const Shape& s, const Lanes& l,
                                           cudaStream_t st) { lanes_variant(d, b, s, l, st, lanes, ""); }});
      v.push_back({"copy+write_" + on, [lanes](const Driver& d, const Buffers& b, const Shape& s, const Lanes& l,
                                               cudaStream_t st) { lanes_variant(d, b, s, l, st, lanes, "write"); }});
      v.push_back({"credit+copy+write_" + on,
                   [lanes](const Driver& d, const Buffers& b, const Shape& s, const Lanes& l, cudaStream_t st) {
                     lanes_variant(d, b, s, l, st, lanes, "credit+write");
                   }});
    }
    v.push_back({"split+write" + (on.empty() ? "" : "_" + on),
                 [lanes](const Driver& d, const Buffers& b, const Shape& s, const Lanes& l, cudaStream_t st) {
                   lanes_variant(d, b, s, l, st, lanes, "split");
                 }});
  }
  return v;
}

struct Options {
  int dst_device = -1;
  std::string variant;  // empty: all
  bool list = false;
  std::vector<size_t> chunk_bytes{65536, 262144, 1048576, 4194304};
  size_t chunks = 64;
  int reps = 20;
};

std::vector<size_t> parse_sizes(const std::string& list) {
  std::vector<size_t> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    out.push_back(std::stoull(list.substr(at, comma - at)));
    at = comma + 1;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") {
      o.list = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
    if (a == "--dst-device") o.dst_device = std::stoi(argv[++i]);
    else if (a == "--chunk-bytes") o.chunk_bytes = parse_sizes(argv[++i]);
    else if (a == "--chunks") o.chunks = std::stoull(argv[++i]);
    else if (a == "--reps") o.reps = std::stoi(argv[++i]);
    else if (a == "--variant") o.variant = argv[++i];
    else throw std::invalid_argument("unknown argument " + a);
  }
  return o;
}

// A stream's work waited for with a deadline: a variant whose commands never finish cannot be
// recovered from, so the process says which and ends.
void sync_within(cudaStream_t st, double seconds, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  while (true) {
    const cudaError_t e = cudaStreamQuery(st);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) check(e, what.c_str());
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) {
      std::printf("{\"error\": \"%s did not finish within %.0f s\"}\n", what.c_str(), seconds);
      std::fflush(stdout);
      std::_Exit(3);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

template <typename T>
T* device_alloc(size_t bytes, int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  check(cudaMemset(p, 0, bytes), "cudaMemset");
  return static_cast<T*>(p);
}

Buffers allocate(size_t bytes, size_t chunks, int dst_device) {
  Buffers b;
  b.dst = device_alloc<char>(bytes, dst_device);
  b.signals = device_alloc<uint32_t>(chunks * 4, dst_device);
  b.src = device_alloc<char>(bytes, 0);
  b.zero = device_alloc<uint32_t>(4, 0);
  b.busy = device_alloc<uint32_t>(chunks * 4, 0);
  b.gate = device_alloc<uint32_t>(4, 0);
  b.ones = device_alloc<uint32_t>(4, 0);
  const uint32_t one = 1;
  check(cudaMemcpy(b.ones, &one, 4, cudaMemcpyHostToDevice), "setting the word of ones");
  return b;
}

// Milliseconds of each rep: the variant's commands (directly or as a graph) queued behind a
// closed gate, then the gate opened from a second stream.
std::vector<float> time_variant(const Driver& d, const Buffers& b, const Shape& s, const Lanes& l, const Variant& run,
                                bool graph, int reps, cudaStream_t st, cudaStream_t opener) {
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t g = nullptr;
    check(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), "begin capture");
    try {
      run(d, b, s, l, st);
    } catch (...) {
      cudaStreamEndCapture(st, &g);  // leave the stream usable for the next variant
      if (g) cudaGraphDestroy(g);
      cudaGetLastError();
      throw;
    }
    check(cudaStreamEndCapture(st, &g), "end capture");
    check(cudaGraphInstantiate(&exec, g, 0), "instantiate");
    check(cudaGraphDestroy(g), "graph destroy");
  }
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> ms;
  for (int r = 0; r < reps + 2; ++r) {  // two warm-up reps
    check(d.write(st, ptr(b.gate), 0, CU_STREAM_WRITE_VALUE_DEFAULT), "gate close");
    sync_within(st, 10.0, "closing the gate");
    check(d.wait(st, ptr(b.gate), 1, CU_STREAM_WAIT_VALUE_EQ), "gate wait");
    check(cudaEventRecord(start, st), "record");
    try {
      if (graph) check(cudaGraphLaunch(exec, st), "graph launch");
      else run(d, b, s, l, st);
    } catch (...) {  // open the gate, so that what was queued ends, then say why
      check(d.write(opener, ptr(b.gate), 1, CU_STREAM_WRITE_VALUE_DEFAULT), "gate open");
      sync_within(st, 10.0, "the commands queued before a refusal");
      throw;
    }
    check(cudaEventRecord(stop, st), "record");
    check(d.write(opener, ptr(b.gate), 1, CU_STREAM_WRITE_VALUE_DEFAULT), "gate open");
    sync_within(st, 10.0, "a rep of a variant");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    if (r >= 2) ms.push_back(t);
  }
  check(cudaEventDestroy(start), "event destroy");
  check(cudaEventDestroy(stop), "event destroy");
  if (exec) check(cudaGraphExecDestroy(exec), "graph exec destroy");
  return ms;
}

Lanes make_lanes(size_t chunks) {  // lives as long as the process: nothing to destroy
  Lanes l;
  auto stream = [] {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "lane stream");
    return s;
  };
  auto event = [] {
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "lane event");
    return e;
  };
  for (size_t i = 0; i < kLanes; ++i) l.copies.push_back(stream());
  l.signals = stream();
  for (size_t k = 0; k < chunks; ++k) l.chunk_done.push_back(event());
  l.fork = event();
  for (size_t i = 0; i <= kLanes; ++i) l.joins.push_back(event());
  return l;
}

float quantile(std::vector<float> v, double q) {
  std::sort(v.begin(), v.end());
  return v[size_t(q * double(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) try {
  // 8 copy streams, the signal stream, the timed one and the gate's opener are more streams than
  // CUDA's 8 default hardware queues: the opener then shares a queue with a stream waiting at the
  // gate, and nothing finishes (seen with the 8-stream variants).
  p2pbench::request_device_connections();
  Options o = parse(argc, argv);
  if (o.list) {
    for (const auto& v : variants()) std::printf("%s\n", v.first.c_str());
    return 0;
  }
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (o.dst_device < 0) o.dst_device = devices > 1 ? 1 : 0;
  if (o.dst_device != 0) {
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaDeviceEnablePeerAccess(o.dst_device, 0), "enabling peer access 0 -> dst");
  }
  const Driver d;
  const size_t largest = *std::max_element(o.chunk_bytes.begin(), o.chunk_bytes.end());
  const Buffers b = allocate(largest * o.chunks, o.chunks, o.dst_device);
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t st, opener;
  check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  check(cudaStreamCreateWithFlags(&opener, cudaStreamNonBlocking), "stream");
  const Lanes lanes = make_lanes(o.chunks);
  std::fprintf(stderr, "source GPU 0, destination GPU %d%s; %zu chunks, %d reps\n", o.dst_device,
               o.dst_device == 0 ? " (one GPU: not a P2P figure)" : "", o.chunks, o.reps);
  for (size_t chunk : o.chunk_bytes)
    for (bool graph : {false, true})
      for (const auto& [name, run] : variants()) {
        if (!o.variant.empty() && name != o.variant) continue;
        const Shape s{chunk, o.chunks};
        std::vector<float> ms;
        try {
          ms = time_variant(d, b, s, lanes, run, graph, o.reps, st, opener);
        } catch (const std::exception& e) {  // a variant the driver refuses: say so, go on
          std::printf("{\"variant\": \"%s\", \"graph\": %s, \"chunk_bytes\": %zu, \"error\": \"%s\"}\n", name.c_str(),
                      graph ? "true" : "false", chunk, e.what());
          continue;
        }
        const double med_us = 1e3 * quantile(ms, 0.5);
        std::printf("{\"variant\": \"%s\", \"graph\": %s, \"dst_device\": %d, \"chunk_bytes\": %zu, \"chunks\": %zu, "
                    "\"median_us\": %.2f, \"min_us\": %.2f, \"p90_us\": %.2f, \"us_per_chunk\": %.3f, \"GBps\": %.1f}\n",
                    name.c_str(), graph ? "true" : "false", o.dst_device, chunk, o.chunks, med_us,
                    1e3 * quantile(ms, 0.0), 1e3 * quantile(ms, 0.9), med_us / double(o.chunks),
                    double(chunk * o.chunks) / (med_us * 1e3));
        std::fflush(stdout);
      }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "p2pbench-probe-ce-signal: %s\n", e.what());
  return 1;
}
