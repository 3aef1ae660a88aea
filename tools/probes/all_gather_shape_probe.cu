// Why the SM all-gather's rate falls as blocks are added at some shapes (two H200: 32 blocks of
// 512 threads move less than 24; past 16 blocks of 1024 threads every block added moves less)
// while plain bidirectional LD/ST push keeps rising. The all-gather's inner loop is reproduced
// here: each thread loads 16 bytes of its rank's chunk and stores them to the destinations, a block
// taking pieces b, b + G, ... of blockDim vectors. What varies, one axis at a time:
//   targets     peer (the peer's copy only), local+peer (the collective: its own copy, then the
//               peer's, from one load), peer+local (the same, peer first), two-passes (all of the
//               peer's copy, then all of its own), indexed (local+peer addressed as the collective
//               kernel does: an array of the ranks' outputs indexed at run time)
//   directions  both (the two GPUs at once, as the collective) or one (GPU 0 only)
//   placements  default (G blocks as the scheduler places them), spread (one block on every
//               (SMs/G)-th SM), first (SMs 0..G-1), gpc-rr (round robin over the GPCs),
//               gpc-packed (GPC by GPC): a chosen placement launches a block on every SM (one
//               fits, by its shared memory) and the blocks on unchosen SMs return at once
//   schedules   static (block b takes pieces b, b + G, ..., as the collective) or dynamic (blocks
//               claim grains of --grain-pieces pieces from a counter)
// The GPCs are found by launching thread-block clusters (a cluster never spans GPCs).
//
// Usage: p2pbench-probe-all-gather-shape [--chunk-mib M] [--blocks L] [--threads L] [--targets L]
//          [--directions L] [--placements L] [--schedules L] [--grain-pieces L] [--reps R]
//          [--back-to-back 1]
//          (L: comma-separated)
// Needs two GPUs with peer access (GPU 0 and 1) and compute capability 9.0 (clusters).
// stdout: one JSON object for the GPC map, then one per case: the shape, the slower GPU's median
// time per rep, GB/s (1e9 B/s) of link bytes (both directions summed), the spread of the blocks'
// own times, the SMs and GPCs the blocks sat on, and whether every byte arrived.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/ptx.cuh"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

enum class Targets { kPeer, kLocalThenPeer, kPeerThenLocal, kTwoPasses, kIndexed };
const std::map<std::string, Targets> kTargets = {{"peer", Targets::kPeer},
                                                 {"local+peer", Targets::kLocalThenPeer},
                                                 {"peer+local", Targets::kPeerThenLocal},
                                                 {"two-passes", Targets::kTwoPasses},
                                                 {"indexed", Targets::kIndexed}};

struct Work {
  const uint4* src = nullptr;
  uint4* peer = nullptr;
  uint4* local = nullptr;
  uint64_t vectors = 0;
  Targets targets = Targets::kPeer;
  const int* slot_of_sm = nullptr;  // nullptr: a block's slot is its index
  int slots = 0;
  uint64_t* times = nullptr;      // start and end (ns) per slot
  unsigned* sm_of_slot = nullptr;  // per slot
  unsigned* taken = nullptr;       // per slot: blocks that took it (1 each, else the placement failed)
  unsigned long long* next_grain = nullptr;  // dynamic schedule: the next grain to claim (zeroed before a launch)
  // The dynamic schedule's unit: a block claims this many pieces at a time (an atomic add a claim,
  // the next claim made while the current grain is stored).
  uint64_t grain_pieces = 16;
  // indexed: as the collective kernel addresses them, its own copy and the peer's from an array
  // of the ranks' outputs indexed at run time, (me + d) % ranks for d = 0, 1.
  uint4* output_of[2] = {};
  int me = 0, ranks = 2;
};

// The slot's pieces of [0, vectors): a load, then put(k, x).
template <class Put>
__device__ void store_pieces(const Work& w, int slot, Put put) {
  const uint64_t piece = blockDim.x;
  for (uint64_t p = uint64_t(slot) * piece; p < w.vectors; p += uint64_t(w.slots) * piece) {
    const uint64_t k = p + threadIdx.x;
    if (k < w.vectors) put(k, w.src[k]);
  }
}

// The same over grains claimed from a counter: a block on a slower SM takes fewer.
template <class Put>
__device__ void store_claimed(const Work& w, Put put) {
  __shared__ unsigned long long claimed[2];
  const uint64_t grain = w.grain_pieces * blockDim.x;
  if (threadIdx.x == 0) claimed[0] = atomicAdd(w.next_grain, 1ull);
  __syncthreads();
  for (int i = 0;; i ^= 1) {
    const uint64_t first = claimed[i] * grain;
    if (first >= w.vectors) break;
    if (threadIdx.x == 0) claimed[i ^ 1] = atomicAdd(w.next_grain, 1ull);
    const uint64_t end = min(first + grain, w.vectors);
    for (uint64_t k = first + threadIdx.x; k < end; k += blockDim.x) put(k, w.src[k]);
    __syncthreads();
  }
}

template <class Put>
__device__ void store_all(const Work& w, int slot, Put put) {
  if (w.next_grain)
    store_claimed(w, put);
  else
    store_pieces(w, slot, put);
}

__global__ void __launch_bounds__(1024) all_gather_loop(Work w) {
  const unsigned sm = p2pbench::ptx::smid();
  const int slot = w.slot_of_sm ? w.slot_of_sm[sm] : int(blockIdx.x);
  if (slot < 0) return;
  const uint64_t start = p2pbench::ptx::globaltimer_ns();
  switch (w.targets) {
    case Targets::kPeer: store_all(w, slot, [&](uint64_t k, uint4 x) { w.peer[k] = x; }); break;
    case Targets::kLocalThenPeer:
      store_all(w, slot, [&](uint64_t k, uint4 x) { w.local[k] = x; w.peer[k] = x; });
      break;
    case Targets::kPeerThenLocal:
      store_all(w, slot, [&](uint64_t k, uint4 x) { w.peer[k] = x; w.local[k] = x; });
      break;
    case Targets::kTwoPasses:  // fixed pieces only (refused with claims)
      store_pieces(w, slot, [&](uint64_t k, uint4 x) { w.peer[k] = x; });
      store_pieces(w, slot, [&](uint64_t k, uint4 x) { w.local[k] = x; });
      break;
    case Targets::kIndexed:
      store_all(w, slot, [&](uint64_t k, uint4 x) {
        for (int d = 0; d < w.ranks; ++d) w.output_of[(w.me + d) % w.ranks][k] = x;
      });
      break;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  w.times[2 * slot] = start;
  w.times[2 * slot + 1] = p2pbench::ptx::globaltimer_ns();
  w.sm_of_slot[slot] = sm;
  atomicAdd(w.taken + slot, 1u);
}

__global__ void record_sm(unsigned* sm_of_block) {
  if (threadIdx.x == 0) sm_of_block[blockIdx.x] = p2pbench::ptx::smid();
}

__global__ void fill(uint4* p, uint64_t n, uint32_t seed) {
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < n; k += uint64_t(gridDim.x) * blockDim.x) {
    uint64_t z = (k + seed) * 0x9E3779B97F4A7C15ull;  // splitmix64: full-entropy words
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[k] = make_uint4(uint32_t(z), uint32_t(z >> 32), uint32_t(~z), uint32_t(z >> 17));
  }
}

__global__ void count_mismatches(const uint4* a, const uint4* b, uint64_t n, unsigned long long* bad) {
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < n; k += uint64_t(gridDim.x) * blockDim.x) {
    const uint4 x = a[k], y = b[k];
    if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w) atomicAdd(bad, 1ull);
  }
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}
std::vector<int> ints(const std::string& s) {
  std::vector<int> out;
  for (const auto& item : split(s)) out.push_back(std::stoi(item));
  return out;
}

struct Options {
  uint64_t chunk_bytes = 512ull << 20;
  std::vector<int> blocks = {16, 24, 32, 48, 128};
  std::vector<int> threads = {512, 1024};
  std::vector<std::string> targets = {"local+peer"};
  std::vector<std::string> directions = {"both"};
  std::vector<std::string> placements = {"default"};
  std::vector<std::string> schedules = {"static"};
  std::vector<int> grains = {16};
  int reps = 10;
  // The repetitions queued back to back on each GPU, timed as one batch (as the case loop queues
  // its operations), instead of each waited for.
  bool back_to_back = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--chunk-mib") o.chunk_bytes = std::stoull(value) << 20;
    else if (flag == "--blocks") o.blocks = ints(value);
    else if (flag == "--threads") o.threads = ints(value);
    else if (flag == "--targets") o.targets = split(value);
    else if (flag == "--directions") o.directions = split(value);
    else if (flag == "--placements") o.placements = split(value);
    else if (flag == "--schedules") o.schedules = split(value);
    else if (flag == "--grain-pieces") o.grains = ints(value);
    else if (flag == "--reps") o.reps = std::stoi(value);
    else if (flag == "--back-to-back") o.back_to_back = value == "1";
    else throw std::invalid_argument("unknown flag " + flag);
  }
  for (const auto& t : o.targets)
    if (!kTargets.count(t)) throw std::invalid_argument("--targets: unknown " + t);
  for (const auto& s : o.schedules)
    if (s != "static" && s != "dynamic") throw std::invalid_argument("--schedules: unknown " + s);
  return o;
}

// Dynamic shared memory that keeps a second block of the kernel off an SM: more than half an SM's.
int one_block_smem(int device) {
  int per_sm = 0, per_block = 0;
  check(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device), "reading smem per SM");
  check(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "reading smem per block");
  const int bytes = per_sm / 2 + 1024;
  if (bytes > per_block) throw std::runtime_error("this GPU cannot keep one block per SM by shared memory");
  return bytes;
}

constexpr int kMaxSlots = 1024;

// One GPU's buffers and stream: its chunk, the peer's chunk as the peer writes it here, its own copy.
struct Gpu {
  int device = 0;
  int sm_count = 0;
  uint64_t vectors = 0;
  uint4* src = nullptr;
  uint4* received = nullptr;
  uint4* local = nullptr;
  uint64_t* times = nullptr;
  unsigned* sms = nullptr;
  unsigned* taken = nullptr;
  int* slot_of_sm = nullptr;
  unsigned long long* bad = nullptr;
  unsigned long long* next_grain = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

Gpu open_gpu(int device, int peer, uint64_t vectors) {
  Gpu g;
  g.device = device;
  g.vectors = vectors;
  check(cudaSetDevice(device), "selecting a GPU");
  check(cudaDeviceEnablePeerAccess(peer, 0), "enabling peer access");
  check(cudaDeviceGetAttribute(&g.sm_count, cudaDevAttrMultiProcessorCount, device), "counting SMs");
  if (g.sm_count > kMaxSlots) throw std::runtime_error("more SMs than the probe's slots");
  for (uint4** p : {&g.src, &g.received, &g.local}) check(cudaMalloc(p, vectors * sizeof(uint4)), "allocating a buffer");
  check(cudaMalloc(&g.times, 2 * kMaxSlots * sizeof(uint64_t)), "allocating block times");
  check(cudaMalloc(&g.sms, kMaxSlots * sizeof(unsigned)), "allocating block SMs");
  check(cudaMalloc(&g.taken, kMaxSlots * sizeof(unsigned)), "allocating slot counts");
  check(cudaMalloc(&g.slot_of_sm, kMaxSlots * sizeof(int)), "allocating the SM map");
  check(cudaMalloc(&g.bad, sizeof(unsigned long long)), "allocating a counter");
  check(cudaMalloc(&g.next_grain, sizeof(unsigned long long)), "allocating a counter");
  check(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking), "creating a stream");
  check(cudaEventCreate(&g.start), "creating an event");
  check(cudaEventCreate(&g.stop), "creating an event");
  fill<<<264, 1024, 0, g.stream>>>(g.src, vectors, uint32_t(device * 7919 + 1));
  check(cudaGetLastError(), "filling a chunk");
  check(cudaFuncSetAttribute(all_gather_loop, cudaFuncAttributeMaxDynamicSharedMemorySize, one_block_smem(device)),
        "allowing the shared memory that keeps a second block off an SM");
  check(cudaStreamSynchronize(g.stream), "filling a chunk");
  return g;
}

// SM -> GPC on `device`: blocks of one cluster share a GPC, so clusters of 16, 8, 4 and 2 blocks,
// one block per SM, joined by union-find. GPCs numbered by their lowest SM; -1: an SM no cluster took.
std::vector<int> gpc_of_sm(const Gpu& g) {
  std::vector<int> parent(g.sm_count);
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<bool> seen(g.sm_count, false);
  const int smem = one_block_smem(g.device);
  check(cudaSetDevice(g.device), "selecting a GPU");
  check(cudaFuncSetAttribute(record_sm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), "allowing clusters of 16");
  check(cudaFuncSetAttribute(record_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "allowing shared memory");
  for (int size : {16, 8, 4, 2}) {
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = size;
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.blockDim = dim3(32);
    config.dynamicSmemBytes = smem;
    config.stream = g.stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
    config.gridDim = dim3(size);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, record_sm, &config) != cudaSuccess || clusters == 0) {
      cudaGetLastError();
      continue;
    }
    config.gridDim = dim3(unsigned(clusters * size));
    check(cudaLaunchKernelEx(&config, record_sm, g.sms), "launching clusters");
    std::vector<unsigned> sms(clusters * size);
    check(cudaMemcpy(sms.data(), g.sms, sms.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), "reading SMs");
    for (size_t b = 0; b < sms.size(); ++b) {
      if (sms[b] >= unsigned(g.sm_count)) throw std::runtime_error("an SM id past the SM count");
      seen[sms[b]] = true;
      parent[root(int(sms[b]))] = root(int(sms[b - b % size]));
    }
  }
  std::vector<int> gpc(g.sm_count, -1);
  std::map<int, int> number;  // root -> GPC, in order of the lowest SM
  for (int sm = 0; sm < g.sm_count; ++sm)
    if (seen[sm]) gpc[sm] = number.emplace(root(sm), int(number.size())).first->second;
  return gpc;
}

// The SMs a placement puts blocks 0..G-1 on (empty: as the scheduler places them).
std::vector<int> chosen_sms(const std::string& placement, int blocks, const std::vector<int>& gpc) {
  const int n = int(gpc.size());
  std::vector<int> sms;
  if (placement == "default") return sms;
  if (blocks > n) throw std::invalid_argument("a placement on chosen SMs takes at most one block per SM");
  if (placement == "first" || placement == "spread") {
    for (int i = 0; i < blocks; ++i) sms.push_back(placement == "first" ? i : int(int64_t(i) * n / blocks));
    return sms;
  }
  std::map<int, std::vector<int>> groups;  // GPC (-1: unknown) -> its SMs
  for (int sm = 0; sm < n; ++sm) groups[gpc[sm]].push_back(sm);
  if (placement == "gpc-packed") {
    for (const auto& [id, members] : groups)
      if (id >= 0) sms.insert(sms.end(), members.begin(), members.end());
  } else if (placement == "gpc-rr") {
    for (size_t round = 0; sms.size() < size_t(n); ++round) {
      size_t before = sms.size();
      for (const auto& [id, members] : groups)
        if (id >= 0 && round < members.size()) sms.push_back(members[round]);
      if (sms.size() == before) break;
    }
  } else {
    throw std::invalid_argument("--placements: unknown " + placement);
  }
  if (sms.size() < size_t(blocks)) throw std::runtime_error("the GPC map covers fewer SMs than the blocks");
  sms.resize(blocks);
  return sms;
}

struct Case {
  int blocks = 0, threads = 0;
  std::string targets, directions, placement, schedule;
  int grain_pieces = 16;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Launches the loop on `g`, writing into `peer`'s received buffer; events around it.
void launch(Gpu& g, const Gpu& peer, const Case& c, const std::vector<int>& sms) {
  check(cudaSetDevice(g.device), "selecting a GPU");
  Work w;
  w.src = g.src;
  w.peer = peer.received;
  w.local = g.local;
  w.me = g.device;  // GPU 0 and 1 are ranks 0 and 1
  w.output_of[g.device] = g.local;
  w.output_of[peer.device] = peer.received;
  w.vectors = g.vectors;
  w.targets = kTargets.at(c.targets);
  w.slot_of_sm = sms.empty() ? nullptr : g.slot_of_sm;
  w.slots = c.blocks;
  w.times = g.times;
  w.sm_of_slot = g.sms;
  w.taken = g.taken;
  if (c.schedule == "dynamic") {
    if (c.targets == "two-passes") throw std::invalid_argument("the dynamic schedule takes no two passes");
    w.next_grain = g.next_grain;
    w.grain_pieces = uint64_t(c.grain_pieces);
    check(cudaMemsetAsync(g.next_grain, 0, sizeof(unsigned long long), g.stream), "zeroing the grain counter");
  }
  const unsigned grid = sms.empty() ? unsigned(c.blocks) : unsigned(g.sm_count);
  const size_t smem = sms.empty() ? 0 : size_t(one_block_smem(g.device));
  check(cudaEventRecord(g.start, g.stream), "recording an event");
  all_gather_loop<<<grid, c.threads, smem, g.stream>>>(w);
  check(cudaGetLastError(), "launching the loop");
  check(cudaEventRecord(g.stop, g.stream), "recording an event");
}

unsigned long long mismatches(Gpu& on, const uint4* a, const uint4* b) {
  check(cudaSetDevice(on.device), "selecting a GPU");
  check(cudaMemsetAsync(on.bad, 0, sizeof(unsigned long long), on.stream), "clearing a counter");
  count_mismatches<<<264, 1024, 0, on.stream>>>(a, b, on.vectors, on.bad);
  check(cudaGetLastError(), "launching the check");
  unsigned long long bad = 0;
  check(cudaMemcpyAsync(&bad, on.bad, sizeof bad, cudaMemcpyDeviceToHost, on.stream), "reading the check");
  check(cudaStreamSynchronize(on.stream), "checking a copy");
  return bad;
}

// --back-to-back: after the same two warm-up repetitions, `reps` repetitions queued without a
// wait between them on each GPU, what they write poisoned before the batch; one figure, the
// slower GPU's batch time over reps.
std::vector<double> time_batch(std::vector<Gpu>& gpus, const Case& c, const std::vector<int>& sms, size_t active,
                               int reps) {
  for (int rep = 0; rep < 2; ++rep)
    for (size_t i = 0; i < active; ++i) launch(gpus[i], gpus[1 - i], c, sms);
  for (auto& g : gpus) {
    check(cudaSetDevice(g.device), "selecting a GPU");
    check(cudaDeviceSynchronize(), "warming up");
    check(cudaMemset(g.received, 0xEE, g.vectors * sizeof(uint4)), "poisoning");
    check(cudaMemset(g.local, 0xEE, g.vectors * sizeof(uint4)), "poisoning");
    check(cudaMemset(g.taken, 0, kMaxSlots * sizeof(unsigned)), "clearing slot counts");
    check(cudaDeviceSynchronize(), "poisoning");
  }
  std::vector<cudaEvent_t> first(active);
  for (size_t i = 0; i < active; ++i) {
    check(cudaSetDevice(gpus[i].device), "selecting a GPU");
    check(cudaEventCreate(&first[i]), "creating an event");
    check(cudaEventRecord(first[i], gpus[i].stream), "recording an event");
  }
  for (int rep = 0; rep < reps; ++rep) {
    if (rep == reps - 1)  // the slots' counts of the last repetition only (each slot taken once)
      for (size_t i = 0; i < active; ++i) {
        check(cudaSetDevice(gpus[i].device), "selecting a GPU");
        check(cudaMemsetAsync(gpus[i].taken, 0, kMaxSlots * sizeof(unsigned), gpus[i].stream), "clearing slot counts");
      }
    for (size_t i = 0; i < active; ++i) launch(gpus[i], gpus[1 - i], c, sms);
  }
  double slowest = 0;
  for (size_t i = 0; i < active; ++i) {
    check(cudaEventSynchronize(gpus[i].stop), "running the batch");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, first[i], gpus[i].stop), "timing the batch");
    slowest = std::max(slowest, double(ms) / reps);
    check(cudaEventDestroy(first[i]), "destroying an event");
  }
  return {slowest};
}

// The slower GPU's time of each timed repetition (ms), after two warm-up ones; what the last
// repetition writes is poisoned before it (the one verified).
std::vector<double> time_reps(std::vector<Gpu>& gpus, const Case& c, const std::vector<int>& sms, size_t active,
                              int reps) {
  constexpr int kWarmup = 2;
  std::vector<double> slower_ms;
  for (int rep = 0; rep < kWarmup + reps; ++rep) {
    if (rep == kWarmup + reps - 1)
      for (auto& g : gpus) {
        check(cudaSetDevice(g.device), "selecting a GPU");
        check(cudaMemset(g.received, 0xEE, g.vectors * sizeof(uint4)), "poisoning");
        check(cudaMemset(g.local, 0xEE, g.vectors * sizeof(uint4)), "poisoning");
        check(cudaMemset(g.taken, 0, kMaxSlots * sizeof(unsigned)), "clearing slot counts");
        check(cudaDeviceSynchronize(), "poisoning");
      }
    for (size_t i = 0; i < active; ++i) launch(gpus[i], gpus[1 - i], c, sms);
    double slowest = 0;
    for (size_t i = 0; i < active; ++i) {
      check(cudaEventSynchronize(gpus[i].stop), "running the loop");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, gpus[i].start, gpus[i].stop), "timing the loop");
      slowest = std::max(slowest, double(ms));
    }
    if (rep >= kWarmup) slower_ms.push_back(slowest);
  }
  return slower_ms;
}

// GPU 0's blocks in the verified repetition: each block's SM and time, their spread, the blocks
// per GPC, and whether every slot was taken once ("placed").
nlohmann::ordered_json blocks_of(const Gpu& g, const Case& c, const std::vector<int>& gpc) {
  std::vector<uint64_t> times(2 * c.blocks);
  std::vector<unsigned> on_sm(c.blocks), taken(c.blocks);
  check(cudaSetDevice(g.device), "selecting a GPU");
  check(cudaMemcpy(times.data(), g.times, times.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost), "reading times");
  check(cudaMemcpy(on_sm.data(), g.sms, on_sm.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), "reading SMs");
  check(cudaMemcpy(taken.data(), g.taken, taken.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), "reading slots");
  std::vector<double> block_us;
  nlohmann::ordered_json sm_and_us = nlohmann::ordered_json::array();
  std::map<std::string, int> per_gpc;
  uint64_t first_start = ~0ull, last_start = 0;
  for (int b = 0; b < c.blocks; ++b) {
    block_us.push_back((times[2 * b + 1] - times[2 * b]) / 1e3);
    sm_and_us.push_back({on_sm[b], int(block_us.back())});
    ++per_gpc[std::to_string(gpc[on_sm[b]])];
    first_start = std::min(first_start, times[2 * b]);
    last_start = std::max(last_start, times[2 * b]);
  }
  return {{"block_us", {{"min", *std::min_element(block_us.begin(), block_us.end())},
                        {"median", median(block_us)},
                        {"max", *std::max_element(block_us.begin(), block_us.end())}}},
          {"start_skew_us", (last_start - first_start) / 1e3},
          {"distinct_sms", std::set<unsigned>(on_sm.begin(), on_sm.end()).size()},
          {"blocks_per_gpc", per_gpc},
          {"sm_and_us", sm_and_us},
          {"placed", std::all_of(taken.begin(), taken.end(), [](unsigned t) { return t == 1; })}};
}

// Prints the case's row; returns whether every byte arrived and every slot was taken once.
bool run_case(std::vector<Gpu>& gpus, const Case& c, const std::vector<int>& gpc, int reps, bool back_to_back) {
  const std::vector<int> sms = chosen_sms(c.placement, c.blocks, gpc);
  const size_t active = c.directions == "both" ? 2 : 1;
  std::vector<int> slot_of_sm(kMaxSlots, -1);
  for (size_t s = 0; s < sms.size(); ++s) slot_of_sm[sms[s]] = int(s);
  for (size_t i = 0; i < active; ++i) {
    check(cudaSetDevice(gpus[i].device), "selecting a GPU");
    check(cudaMemcpy(gpus[i].slot_of_sm, slot_of_sm.data(), kMaxSlots * sizeof(int), cudaMemcpyHostToDevice),
          "writing the SM map");
  }
  const std::vector<double> ms =
      back_to_back ? time_batch(gpus, c, sms, active, reps) : time_reps(gpus, c, sms, active, reps);
  bool verified = true;
  for (size_t i = 0; i < active; ++i) {
    verified &= mismatches(gpus[1 - i], gpus[1 - i].received, gpus[i].src) == 0;
    if (c.targets != "peer") verified &= mismatches(gpus[i], gpus[i].local, gpus[i].src) == 0;
  }
  const double link_bytes = double(active) * double(gpus[0].vectors) * 16;
  nlohmann::ordered_json row = {{"blocks", c.blocks}, {"threads", c.threads}, {"targets", c.targets},
                                {"directions", c.directions}, {"placement", c.placement}, {"schedule", c.schedule},
                                {"grain_pieces", c.schedule == "dynamic" ? c.grain_pieces : 0},
                                {"back_to_back", back_to_back},
                                {"ms_median", median(ms)}, {"ms_min", *std::min_element(ms.begin(), ms.end())},
                                {"ms_max", *std::max_element(ms.begin(), ms.end())},
                                {"link_gbps", link_bytes / (median(ms) * 1e-3) / 1e9}};
  row.update(blocks_of(gpus[0], c, gpc));
  row["verified"] = verified;
  printf("%s\n", row.dump().c_str());
  fflush(stdout);
  return verified && row["placed"].get<bool>();
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "counting GPUs");
  if (devices < 2) throw std::runtime_error("needs two GPUs (found " + std::to_string(devices) + ")");
  const uint64_t vectors = o.chunk_bytes / 16;
  std::vector<Gpu> gpus = {open_gpu(0, 1, vectors), open_gpu(1, 0, vectors)};
  const std::vector<int> gpc = gpc_of_sm(gpus[0]);
  printf("%s\n", nlohmann::json{{"gpc_of_sm", gpc}}.dump().c_str());
  bool all_verified = true;
  for (const auto& directions : o.directions)
    for (const auto& targets : o.targets)
      for (const auto& placement : o.placements)
        for (const auto& schedule : o.schedules)
          for (int grain : schedule == "dynamic" ? o.grains : std::vector<int>{0})
            for (int threads : o.threads)
              for (int blocks : o.blocks)
                all_verified &=
                    run_case(gpus, {blocks, threads, targets, directions, placement, schedule, grain}, gpc, o.reps,
                             o.back_to_back);
  return all_verified ? 0 : 1;
} catch (const std::exception& e) {
  fprintf(stderr, "p2pbench-probe-all-gather-shape: %s\n", e.what());
  return 2;
}
