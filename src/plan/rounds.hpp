// The matrix in rounds: every pair of ranks exactly once, in rounds of disjoint pairs
// in which no GPU appears twice, so a round measures its pairs at once and no two of them share
// a GPU's link. Linear in the group's size, where one pair at a time is quadratic.
#pragma once

#include <utility>
#include <vector>

#include "plan/case_spec.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

// A pair of ranks, a < b.
using RankPair = std::pair<int, int>;

// Every unordered pair of ranks once, in rounds (each round's pairs in ascending order).
// Within a node, ranks on distinct GPUs: the circle method (round-robin tournament): N - 1
// rounds for even N, N for odd N (each round one rank has a bye). Ranks sharing a GPU (a rank's
// GPU is its identity in the layout, not its number): greedy packing, pairs of the busiest GPUs
// first; a pair of ranks on one GPU occupies only that GPU. Several nodes: the nodes' rounds run
// side by side, then the pairs across nodes in rounds of their own (greedy), so that a method
// with no path across nodes skips whole rounds.
std::vector<std::vector<RankPair>> pair_rounds(const GroupLayout& layout);

// The matrix's rounds for one mode. uni: each pair round twice, once a -> b and once b -> a, so
// every ordered pair runs exactly once (2(N - 1) rounds for even N); bidir: each pair round with
// both ways at once (N - 1 rounds).
std::vector<std::vector<Flow>> matrix_rounds(const GroupLayout& layout, Mode mode);

}  // namespace p2pbench
