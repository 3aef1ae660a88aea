// Limits of a sweep that can be checked without a GPU: the kernels' own shape limits and the
// number of cases (the buffers' 64-bit arithmetic: plan/device_memory.cpp). What needs a GPU is listed.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "common/errors.hpp"
#include "common/text_format.hpp"
#include "plan/sweep.hpp"
#include "vocab/kernel_shape.hpp"

namespace p2pbench {

namespace {

// From kernels/: ldst_copy.cu (kMaxThreads, whole warps), atomic_kernels.cu (kMaxThreads,
// kMaxTotalThreads). CUDA's grid limit in x is 2^31-1.
constexpr uint64_t kMaxThreadsPerBlock = 1024;
constexpr uint64_t kMaxAtomicTotalThreads = uint64_t{1} << 31;
constexpr uint64_t kMaxGridBlocks = (uint64_t{1} << 31) - 1;

// A method's limit across its axes, on every combination of the configured values (the first
// axis outermost); the first combination that breaks it is refused, named by the first axis.
void check_axes_limit(const Config& config, const KeyOrigins& origins, const MethodInfo& m, const AxesLimit& limit) {
  std::vector<const std::vector<uint64_t>*> values;
  for (ShapeAxis a : limit.axes) values.push_back(&config.kernel_axes.of(m.id, a));
  if (values.empty() || std::any_of(values.begin(), values.end(), [](const auto* v) { return v->empty(); })) return;
  std::vector<size_t> at(values.size(), 0);  // an odometer over the combinations, the last axis fastest
  while (true) {
    KernelShape shape;
    for (size_t k = 0; k < at.size(); ++k) shape.set_axis(limit.axes[k], (*values[k])[at[k]]);
    if (auto why = limit.broken_by(shape)) {
      const std::string key = std::string(m.name) + "." + to_string(limit.axes.front()) + "[" + std::to_string(at.front()) + "]";
      throw InputError(key_with_origin(origins, key), std::to_string((*values.front())[at.front()]), *why);
    }
    size_t k = at.size();
    while (k > 0 && ++at[k - 1] == values[k - 1]->size()) at[--k] = 0;
    if (k == 0) return;
  }
}

// What the config's methods declare they need (`need`: of the GPU, of the host), in the
// registry's order, one line for methods that need the same.
void add_needs(const Config& config, const char* MethodInfo::*need, std::vector<std::string>& lines) {
  std::vector<std::string> added;
  for (const MethodInfo& m : method_registry()) {
    const std::string line = m.*need;
    if (line.empty() || std::find(config.methods.begin(), config.methods.end(), m.id) == config.methods.end() ||
        std::find(added.begin(), added.end(), line) != added.end())
      continue;
    added.push_back(line);
    lines.push_back(line);
  }
}

}  // namespace

void validate_kernel_axes(const Config& config, const KeyOrigins& origins) {
  auto check_all = [&](const std::vector<uint64_t>& values, const std::string& key, auto ok, const std::string& why) {
    for (size_t i = 0; i < values.size(); ++i)
      if (!ok(values[i]))
        throw InputError(key_with_origin(origins, key + "[" + std::to_string(i) + "]"), std::to_string(values[i]), why);
  };
  // Each swept axis by its own rule (the method registry's).
  for (const MethodInfo& m : method_registry())
    for (const SweptAxis& a : m.swept)
      if (a.valid) check_all(config.kernel_axes.of(m.id, a.axis), std::string(m.name) + "." + to_string(a.axis), a.valid, a.rule);
  // Then each method's own limits across its axes.
  for (const MethodInfo& m : method_registry())
    for (const AxesLimit& limit : m.axes_limits) check_axes_limit(config, origins, m, limit);
  check_all(config.atomic.threads, "atomic.threads", [](uint64_t v) { return v >= 1 && v <= kMaxThreadsPerBlock; },
            "threads per block must be 1..1024");
  check_all(config.atomic.blocks, "atomic.blocks", [](uint64_t v) { return v >= 1 && v <= kMaxGridBlocks; },
            "blocks must be 1..2147483647 (CUDA's grid limit)");
  const uint64_t most_threads = *std::max_element(config.atomic.threads.begin(), config.atomic.threads.end());
  check_all(config.atomic.blocks, "atomic.blocks",
            [&](uint64_t v) { return v * most_threads <= kMaxAtomicTotalThreads; },
            "blocks x threads (" + std::to_string(most_threads) + ") must be at most 2^31, the atomic kernel's limit");
}

void check_case_count(const Config& config, const GroupLayout& layout) {
  const uint64_t n = count_cases(config, layout);
  if (n <= kMaxCases) return;
  std::string axes = std::to_string(config.methods.size()) + " methods, " + std::to_string(config.directions.size()) +
                     " directions, " + std::to_string(config.modes.size()) + " modes, " +
                     std::to_string(config.sizes.size()) + " sizes, kernel shapes, and the patterns' cases over " +
                     std::to_string(layout.size()) + " ranks";
  throw InputError("sweep", n == std::numeric_limits<uint64_t>::max() ? "more than 2^64 cases" : std::to_string(n) + " cases",
                   "more than the limit of " + std::to_string(kMaxCases) + " cases (" + axes +
                       "); narrow an axis, choose rounds or sampled over the sequential matrix, or split the sweep into "
                       "several runs");
}

void check_case_count(const Config& config) { check_case_count(config, GroupLayout::distinct(2)); }

std::vector<std::string> checks_needing_a_gpu(const Config& config, const std::vector<CaseSpec>& cases,
                                              const GroupLayout& layout) {
  std::vector<std::string> lines;
  const DeviceMemoryNeed need = device_memory_need(config, cases, layout);
  lines.push_back("device memory: needs " + format_size(need.per_gpu_bytes) + " per GPU (per rank a source and " +
                  std::to_string(need.destination_slots) + " destination slot" + (need.destination_slots > 1 ? "s" : "") +
                  " of " + format_size(need.buffer_bytes) + " each, " + std::to_string(need.ranks_on_busiest_gpu) +
                  " rank" + (need.ranks_on_busiest_gpu > 1 ? "s" : "") + " on the busiest GPU, plus 256 MiB" +
                  (layout.size() == 2 && need.ranks_on_busiest_gpu == 1 ? "; twice the buffers with --allow-same-device" : "") +
                  ")");
  uint64_t most_blocks = 0;
  for (const CaseSpec& c : cases)
    if (c.blocks) most_blocks = std::max<uint64_t>(most_blocks, uint64_t(*c.blocks));
  if (most_blocks > 0)
    lines.push_back("blocks up to " + std::to_string(most_blocks) +
                    ": whether the GPU has that many SMs (more blocks than SMs run in waves, one per SM at a "
                    "time; each row's sms_used says how many SMs took part)");
  add_needs(config, &MethodInfo::gpu_need, lines);
  if (std::any_of(cases.begin(), cases.end(), [](const CaseSpec& c) { return needs_peer_mapping(c.method); }))
    lines.push_back("peer access between the GPUs (P2P methods are skipped without it)");
  if (std::any_of(config.methods.begin(), config.methods.end(), [](Method m) { return method_info(m).needs_nccl; }))
    lines.push_back("nccl and NCCL's collectives: NCCL in this build and at run time, each rank on a GPU of its own");
  add_needs(config, &MethodInfo::host_need, lines);
  return lines;
}

std::vector<std::string> checks_needing_a_gpu(const Config& config, const std::vector<CaseSpec>& cases) {
  return checks_needing_a_gpu(config, cases, GroupLayout::distinct(2));
}

}  // namespace p2pbench
