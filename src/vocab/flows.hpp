// The ground floor's words for how bytes go: directions, modes, patterns, schedules and flows,
// with their text forms (configs, the command line, case names and results use these).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace p2pbench {

enum class Direction { kPush, kPull };
enum class Mode { kUni, kBidir };

// Which flows a case runs at once. Every pattern is a set of concurrent flows
// released by one start gate; see docs/groups.md.
//   matrix      one pair at a time (uni: one flow; bidir: the pair's two flows): the N x N matrix
//   sampled     the matrix restricted to k seeded random peers per rank
//   one_to_all, all_to_one, all_to_all, ring (shift k), bisection (first half <-> second half)
//   flows       an explicit list from the config
enum class Pattern { kMatrix, kSampled, kOneToAll, kAllToOne, kAllToAll, kRing, kBisection, kFlows };
// How the matrix is measured: one pair at a time, in rounds of disjoint pairs, or (the check
// of the rounds) a sample of pairs re-measured alone.
enum class Schedule { kSequential, kRounds, kAloneCheck };

const char* to_string(Direction d);
const char* to_string(Mode m);
const char* to_string(Pattern p);
const char* to_string(Schedule s);
std::optional<Pattern> parse_pattern(const std::string& s);
std::optional<Schedule> parse_schedule(const std::string& s);
std::vector<std::string> pattern_names();
std::optional<Direction> parse_direction(const std::string& s);
std::optional<Mode> parse_mode(const std::string& s);


// One stream of bytes from a source rank to a destination rank (who drives it: the engine rank
// of the case's direction). Host-link cases have src == dst (the GPU and its host).
struct Flow {
  int src_rank;
  int dst_rank;
  bool operator==(const Flow& o) const { return src_rank == o.src_rank && dst_rank == o.dst_rank; }
  bool operator!=(const Flow& o) const { return !(*this == o); }
};

}  // namespace p2pbench
