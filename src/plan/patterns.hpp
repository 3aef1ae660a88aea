// The flow sets of the configured patterns: which flows each case of a bandwidth
// method runs at once, for a group of ranks. Method, direction, size and kernel shape are applied
// on top (plan/sweep.hpp); the sets depend only on the pattern keys, the mode and the group.
#pragma once

#include <optional>
#include <vector>

#include "config/config.hpp"
#include "plan/case_spec.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

// One case's flows and how they were chosen.
struct FlowSet {
  Pattern pattern = Pattern::kMatrix;
  std::optional<Schedule> schedule;  // matrix only
  std::optional<int> round;          // rounds only
  std::vector<Flow> flows;
};

// Every ordered pair of `ranks` ranks in matrix order: (0,1), (1,0), (0,2), (2,0), (0,3), ...,
// (1,2), (2,1), ... (pairs {a, b}, a < b, in lexicographic order, each way a -> b first).
std::vector<Flow> ordered_pairs(int ranks);

// The flow sets of each pattern in config.plan.patterns (one group per pattern, in that order)
// for one mode. uni runs the pattern's flows; bidir runs each flow and its reverse at once (a
// pattern whose flows already go both ways, all_to_all for one, is measured in uni only when the
// modes have uni, as it would be the same case twice). Duplicate sets within a pattern (ring
// shifts k and N - k in bidir) run once.
//   matrix sequential: uni every ordered pair alone, bidir every unordered pair both ways;
//   matrix rounds: matrix_rounds(), then matrix.check_alone_pairs seeded pairs alone (schedule
//     alone_check), taken from pairs on two GPUs of one node where there are any;
//   sampled: sampled.peers seeded peers per rank (at most ranks - 1; bidir: each pair once);
//   one_to_all / all_to_one: one set per root; all_to_all: one set; ring: one set per shift;
//   bisection: ranks i and i + N/2 for i < N/2 (odd N: the last rank sits out); uni: first half
//     -> second half, then second -> first; flows: the config's lists.
// Throws InputError naming the key (e.g. "flows[1][0]", "one_to_all.roots[0]", "ring.shifts[0]")
// where a rank does not exist in the group or a shift sends ranks to themselves.
std::vector<std::vector<FlowSet>> pattern_flow_sets(const Config& config, Mode mode, const GroupLayout& layout);

}  // namespace p2pbench
