// Limits of a sweep that can be checked without a GPU: the kernels' own shape limits, the
// number of cases, and 64-bit overflow of the buffer arithmetic. What needs a GPU is listed.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "common/errors.hpp"
#include "config/axis.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {

namespace {

// From kernels/: ldst_copy.cu (kMaxThreads, whole warps), atomic_kernels.cu (kMaxThreads,
// kMaxTotalThreads), tma_copy.cu (kMbarrierBytes per stage). CUDA's grid limit in x is 2^31-1.
constexpr uint64_t kMaxThreadsPerBlock = 1024;
constexpr uint64_t kMaxAtomicTotalThreads = uint64_t{1} << 31;
constexpr uint64_t kMaxGridBlocks = (uint64_t{1} << 31) - 1;
constexpr uint64_t kMbarrierBytesPerStage = 8;
// cudaDevAttrMaxSharedMemoryPerBlockOptin of every GPU that has TMA bulk copies (sm_90 and
// later: H100, H200, B200 report 232448 = 227 KiB). The GPU's own figure is checked at run time
// by tma_unsupported_reason; nothing larger can run anywhere.
constexpr uint64_t kLargestSmemPerBlockOptin = 227 * 1024;
constexpr uint64_t kMinBufferBytes = 4u << 20;     // latency inboxes and the pointer chain
constexpr uint64_t kHeadroomBytes = 256ull << 20;  // CUDA context, NCCL, staging

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}
uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}

uint64_t product(std::initializer_list<uint64_t> factors) {
  uint64_t p = 1;
  for (uint64_t f : factors) p = saturating_mul(p, f);
  return p;
}

uint64_t probe_method_cases(Method m, const Config& c) {
  switch (m) {
    case Method::kLatencySignal: return product({c.latency.protocols.size(), c.latency.payload_bytes.size(), 2});
    case Method::kLatencyRead: {  // every read-chase variant, both orientations (expand_read_chases)
      const LatencySettings& l = c.latency;
      return product({l.read_footprint_bytes.size(), l.read_stride_bytes.size(), l.read_loads.size(), l.read_launch.size(),
                      l.read_timing.size(), l.read_owner.size(), l.read_protocols.size(), 2});
    }
    case Method::kLatencyCe: return product({c.latency.payload_bytes.size(), 2});
    case Method::kAtomic:
      return product({c.atomic.types.size(), c.atomic.patterns.size(), c.atomic.blocks.size(), c.atomic.threads.size(), 2});
    default: return 0;
  }
}

uint64_t shapes_count(Method m, const Config& c) {
  if (m == Method::kLdst) return product({c.ldst.blocks.size(), c.ldst.threads.size(), c.ldst.unroll.size()});
  if (m == Method::kTma) return product({c.tma.blocks.size(), c.tma.smem_bytes.size(), c.tma.stages.size()});
  return 1;
}

}  // namespace

void validate_kernel_axes(const Config& config, const KeyOrigins& origins) {
  auto check_all = [&](const std::vector<uint64_t>& values, const std::string& key, auto ok, const std::string& why) {
    for (size_t i = 0; i < values.size(); ++i)
      if (!ok(values[i]))
        throw InputError(key_with_origin(origins, key + "[" + std::to_string(i) + "]"), std::to_string(values[i]), why);
  };
  check_all(config.ldst.blocks, "ldst.blocks", [](uint64_t v) { return v >= 1 && v <= 65535; }, "blocks must be 1..65535");
  check_all(config.tma.blocks, "tma.blocks", [](uint64_t v) { return v >= 1 && v <= 65535; }, "blocks must be 1..65535");
  check_all(config.ldst.threads, "ldst.threads",
            [](uint64_t v) { return v >= 32 && v <= kMaxThreadsPerBlock && v % 32 == 0; },
            "threads per block must be a multiple of 32 (whole warps) from 32 to 1024");
  check_all(config.ldst.unroll, "ldst.unroll", [](uint64_t v) { return v == 1 || v == 2 || v == 4 || v == 8; },
            "unroll must be 1, 2, 4 or 8");
  check_all(config.tma.stages, "tma.stages", [](uint64_t v) { return v >= 1 && v <= 32; }, "stages must be 1..32");
  // As tma_unsupported_reason: smem_bytes plus one mbarrier per stage within the GPU's limit.
  for (size_t i = 0; i < config.tma.smem_bytes.size(); ++i)
    for (uint64_t stages : config.tma.stages) {
      const uint64_t smem = config.tma.smem_bytes[i];
      if (smem >= 16 && smem + stages * kMbarrierBytesPerStage <= kLargestSmemPerBlockOptin) continue;
      throw InputError(key_with_origin(origins, "tma.smem_bytes[" + std::to_string(i) + "]"), std::to_string(smem),
                       "with " + std::to_string(stages) + " stages, shared memory per block plus " +
                           std::to_string(kMbarrierBytesPerStage) + " bytes of mbarrier per stage must be 16 bytes .. "
                           "227 KiB (232448 bytes), the most any GPU with TMA (Hopper, Blackwell) gives one block; "
                           "the GPU's own limit is checked at run time");
    }
  check_all(config.atomic.threads, "atomic.threads", [](uint64_t v) { return v >= 1 && v <= kMaxThreadsPerBlock; },
            "threads per block must be 1..1024");
  check_all(config.atomic.blocks, "atomic.blocks", [](uint64_t v) { return v >= 1 && v <= kMaxGridBlocks; },
            "blocks must be 1..2147483647 (CUDA's grid limit)");
  const uint64_t most_threads = *std::max_element(config.atomic.threads.begin(), config.atomic.threads.end());
  check_all(config.atomic.blocks, "atomic.blocks",
            [&](uint64_t v) { return v * most_threads <= kMaxAtomicTotalThreads; },
            "blocks x threads (" + std::to_string(most_threads) + ") must be at most 2^31, the atomic kernel's limit");
}

uint64_t count_cases(const Config& config) {
  uint64_t total = 0;
  for (Method m : config.methods) {
    if (is_interference(m)) {  // as expand_interference: the copy engine has no SM partitions
      const auto& s = config.interference;
      for (Method engine : s.engines)
        total = saturating_add(total, product({s.workloads.size(), shapes_count(engine, config), config.directions.size(),
                                               config.modes.size(), config.sizes.size(),
                                               engine == Method::kCe ? 1 : s.sm_partitions.size()}));
      continue;
    }
    if (is_latency(m) || m == Method::kAtomic) {
      total = saturating_add(total, probe_method_cases(m, config));
      continue;
    }
    // As expand_cases: a host link runs only at the first direction and mode (every entry equal
    // to them, if a list repeats one), on each GPU; baselines only at the first direction; uni
    // in both orientations, bidir once.
    const auto& dirs = config.directions;
    const auto& modes = config.modes;
    const auto first_dirs = uint64_t(std::count(dirs.begin(), dirs.end(), dirs.front()));
    const auto first_modes = uint64_t(std::count(modes.begin(), modes.end(), modes.front()));
    const auto uni = uint64_t(std::count(modes.begin(), modes.end(), Mode::kUni));
    const auto bidir = uint64_t(std::count(modes.begin(), modes.end(), Mode::kBidir));
    const uint64_t directions = is_host_link(m) || is_two_sided_baseline(m) ? first_dirs : dirs.size();
    const uint64_t per_size_and_shape = is_host_link(m) ? 2 * first_modes : 2 * uni + bidir;
    total = saturating_add(total, product({directions, per_size_and_shape, shapes_count(m, config), config.sizes.size()}));
  }
  return total;
}

void check_case_count(const Config& config) {
  const uint64_t n = count_cases(config);
  if (n <= kMaxCases) return;
  std::string axes = std::to_string(config.methods.size()) + " methods, " + std::to_string(config.directions.size()) +
                     " directions, " + std::to_string(config.modes.size()) + " modes, " +
                     std::to_string(config.sizes.size()) + " sizes, kernel shapes and orientations";
  throw InputError("sweep", n == std::numeric_limits<uint64_t>::max() ? "more than 2^64 cases" : std::to_string(n) + " cases",
                   "more than the limit of " + std::to_string(kMaxCases) + " cases (" + axes +
                       "); narrow an axis or split the sweep into several runs");
}

std::optional<uint64_t> buffer_slot_stride(uint64_t bytes) {
  uint64_t padded = 0;
  if (__builtin_add_overflow(bytes, kBufferSlotAlignment - 1, &padded)) return std::nullopt;
  return padded / kBufferSlotAlignment * kBufferSlotAlignment;
}

DeviceMemoryNeed device_memory_need(const Config& config, const std::vector<CaseSpec>& cases, const KeyOrigins& origins) {
  DeviceMemoryNeed need;
  need.buffer_bytes = kMinBufferBytes;
  const uint64_t pool = config.buffer_pool_bytes;
  for (const CaseSpec& c : cases) {
    const auto stride = buffer_slot_stride(c.bytes);
    if (!stride)
      throw InputError(key_with_origin(origins, "sizes"), std::to_string(c.bytes),
                       "rounded up to whole " + format_size(kBufferSlotAlignment) + " buffer slots it does not fit in 64 bits");
    // As BufferLayout::for_case: as many whole slots as fit in the pool, at least one.
    const uint64_t footprint = pool > *stride ? pool / *stride * *stride : *stride;
    need.buffer_bytes = std::max(need.buffer_bytes, footprint);
  }
  // Two buffers per rank, twice that with both ranks on one GPU, plus headroom: must fit in 64 bits.
  if (need.buffer_bytes > (std::numeric_limits<uint64_t>::max() - kHeadroomBytes) / 4) {
    const bool pool_is_larger = pool >= need.buffer_bytes;
    throw InputError(key_with_origin(origins, pool_is_larger ? "buffer_pool_bytes" : "sizes"),
                     std::to_string(need.buffer_bytes),
                     "source and destination buffers of this size do not fit in 64 bits of device memory");
  }
  need.per_gpu_bytes = 2 * need.buffer_bytes + kHeadroomBytes;
  return need;
}

std::vector<std::string> checks_needing_a_gpu(const Config& config, const std::vector<CaseSpec>& cases) {
  std::vector<std::string> lines;
  const DeviceMemoryNeed need = device_memory_need(config, cases);
  lines.push_back("device memory: needs " + format_size(need.per_gpu_bytes) + " per GPU (source and destination of " +
                  format_size(need.buffer_bytes) + " each, plus 256 MiB; twice the buffers with --allow-same-device)");
  uint64_t most_blocks = 0;
  for (const CaseSpec& c : cases)
    if (c.blocks) most_blocks = std::max<uint64_t>(most_blocks, uint64_t(*c.blocks));
  if (most_blocks > 0)
    lines.push_back("blocks up to " + std::to_string(most_blocks) +
                    ": whether the GPU has that many SMs (more blocks than SMs run in waves, one per SM at a "
                    "time; each row's sms_used says how many SMs took part)");
  auto uses = [&](Method m) { return std::find(config.methods.begin(), config.methods.end(), m) != config.methods.end(); };
  if (uses(Method::kTma))
    lines.push_back("tma: compute capability 9.0 or later, and smem_bytes plus mbarriers within the GPU's shared memory "
                    "per block");
  if (std::any_of(cases.begin(), cases.end(), [](const CaseSpec& c) { return needs_peer_mapping(c.method); }))
    lines.push_back("peer access between the two GPUs (P2P methods are skipped without it)");
  if (uses(Method::kNccl)) lines.push_back("nccl: NCCL in this build and at run time");
  if (uses(Method::kStaged) || uses(Method::kH2d) || uses(Method::kD2h))
    lines.push_back("host memory: pinned buffers and /dev/shm space for the staged baseline and the host link");
  return lines;
}

}  // namespace p2pbench
