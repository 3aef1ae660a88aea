// Expansion of the declared axes and patterns into the ordered list of cases for a group of
// ranks (the plan), and the limits checked before it is made.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "plan/case_spec.hpp"
#include "plan/device_memory.hpp"
#include "plan/estimate.hpp"
#include "plan/group_layout.hpp"
#include "plan/group_skip.hpp"

namespace p2pbench {

// Every case of the sweep for `layout`'s ranks, grouped so that one console table
// (method/direction/mode/shape) lists consecutive sizes:
//   bandwidth methods (ce, ldst, tma, staged, nccl): per direction and mode, each pattern of
//     config.plan (plan/patterns.hpp) with its shapes and sizes; two ranks with the default
//     matrix: 0 -> 1 and 1 -> 0 (uni), the pair both ways (bidir), exactly as before groups;
//   latency and atomic methods: every ordered pair alone (ordered_pairs);
//   host link (h2d, d2h): r -> r for every rank; interference: ranks 0 and 1.
// Throws InputError where a pattern names a rank the group does not have.
// Throws InputError naming the methods that need a peer where `ranks` is 1: one rank runs only
// the methods of its own GPU (host link, local copies).
void check_rank_count(const Config& config, int ranks);
std::vector<CaseSpec> expand_cases(const Config& config, const GroupLayout& layout);
// Two ranks on two GPUs (GroupLayout::distinct(2)).
std::vector<CaseSpec> expand_cases(const Config& config);

// The host memory kinds and NUMA placements a method's cases sweep: for host-link methods every
// pair of the config's "host" section (kinds outermost), for the others one unset pair.
struct HostAxes {
  std::optional<HostMemoryKind> memory;
  std::optional<NumaPlacement> numa;
};
std::vector<HostAxes> host_axes_of(Method m, const Config& config);

// An interference case's transfer as a case of its engine's method; other cases as they are.
CaseSpec transfer_case_of(const CaseSpec& c);

// Why a case can never run, whatever the GPU (its method's rule across its axes,
// MethodInfo::shape_skip: a TMA chunk that is not a multiple of 16 bytes), or nullopt. Device-dependent limits are checked by the engines at run time; what
// the group's layout rules out is group_skip_reason (plan/group_skip.hpp).
std::optional<std::string> static_skip_reason(const CaseSpec& c);

// Values that are wrong on their own (threads 1025, unroll 3, 300 KiB of TMA shared memory,
// atomic blocks x threads above the kernel's 2^31) are bad input, not skips. Errors name the
// key and, where a flag set it, the flag (`origins`).
void validate_kernel_axes(const Config& config, const KeyOrigins& origins = {});

// The most cases one sweep may expand to; more is refused before anything is expanded.
constexpr uint64_t kMaxCases = 100000;

// How many cases expand_cases would return, from the axes' lengths and the patterns' set counts
// (saturating at UINT64_MAX), so an absurd sweep is refused without building it.
uint64_t count_cases(const Config& config, const GroupLayout& layout);
uint64_t count_cases(const Config& config);  // two ranks

// Refuses a sweep of more than kMaxCases cases (InputError naming the axes' lengths and ranks).
void check_case_count(const Config& config, const GroupLayout& layout);
void check_case_count(const Config& config);  // two ranks

// What --dry-run can say about limits it cannot check without a GPU, one line each.
std::vector<std::string> checks_needing_a_gpu(const Config& config, const std::vector<CaseSpec>& cases,
                                              const GroupLayout& layout);
std::vector<std::string> checks_needing_a_gpu(const Config& config, const std::vector<CaseSpec>& cases);  // two ranks

}  // namespace p2pbench
