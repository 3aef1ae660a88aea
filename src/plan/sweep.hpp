// Expansion of the declared axes into the ordered list of cases, and its cost estimate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

// Every case of the sweep, grouped so that one console table (method/direction/mode/shape)
// lists consecutive sizes. Uni cases come in both orientations (0->1, 1->0).
std::vector<CaseSpec> expand_cases(const Config& config);

// An interference case's transfer as a case of its engine's method (issue 13); other cases as they are.
CaseSpec transfer_case_of(const CaseSpec& c);

// Why a case can never run, whatever the GPU (e.g. a TMA chunk that is not a multiple of
// 16 bytes), or nullopt. Device-dependent limits are checked by the engines at run time.
std::optional<std::string> static_skip_reason(const CaseSpec& c);

// Values that are wrong on their own (threads 1025, unroll 3, 300 KiB of TMA shared memory,
// atomic blocks x threads above the kernel's 2^31) are bad input, not skips. Errors name the
// key and, where a flag set it, the flag (`origins`).
void validate_kernel_axes(const Config& config, const KeyOrigins& origins = {});

// The most cases one sweep may expand to; more is refused before anything is expanded.
constexpr uint64_t kMaxCases = 100000;

// How many cases expand_cases would return, computed from the axes' lengths (saturating at
// UINT64_MAX), so an absurd sweep is refused without building it.
uint64_t count_cases(const Config& config);

// Refuses a sweep of more than kMaxCases cases (InputError naming the axes' lengths).
void check_case_count(const Config& config);

// Buffer slots start at multiples of this (BufferLayout::for_case rounds every size up to it).
constexpr uint64_t kBufferSlotAlignment = 4096;

// A message size rounded up to whole slots, or nullopt where that does not fit in 64 bits.
std::optional<uint64_t> buffer_slot_stride(uint64_t bytes);

// Device memory one rank needs for the sweep: a source and a destination buffer of the largest
// footprint (at least 4 MiB) plus 256 MiB of headroom, as the session checks it against the
// GPU's free memory. Both ranks on one GPU (--allow-same-device) need twice the buffers.
// Throws InputError naming `sizes` or `buffer_pool_bytes` where the sum does not fit in 64 bits.
struct DeviceMemoryNeed {
  uint64_t buffer_bytes = 0;    // one buffer (the largest footprint)
  uint64_t per_gpu_bytes = 0;   // two buffers + headroom, ranks on different GPUs
};
DeviceMemoryNeed device_memory_need(const Config& config, const std::vector<CaseSpec>& cases,
                                    const KeyOrigins& origins = {});

// What --dry-run can say about limits it cannot check without a GPU, one line each.
std::vector<std::string> checks_needing_a_gpu(const Config& config, const std::vector<CaseSpec>& cases);

struct SweepEstimate {
  size_t cases = 0;
  size_t skipped = 0;
  double bytes_moved = 0;   // over all samples and warm-up, at the assumed bandwidth
  double seconds = 0;
};
// Assumes a link of `gbps` GB/s and a per-transfer latency floor, for --dry-run.
SweepEstimate estimate(const Config& config, const std::vector<CaseSpec>& cases, double gbps = 380.0);

}  // namespace p2pbench
