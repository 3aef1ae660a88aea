#include "vocab/flows.hpp"

namespace p2pbench {

namespace {
template <typename E, size_t N>
std::optional<E> parse_enum(const std::string& s, const char* const (&names)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (s == names[i]) return static_cast<E>(i);
  return std::nullopt;
}
constexpr const char* kDirectionNames[] = {"push", "pull"};
constexpr const char* kModeNames[] = {"uni", "bidir"};
constexpr const char* kPatternNames[] = {"matrix", "sampled", "one_to_all", "all_to_one", "all_to_all", "ring", "bisection", "flows"};
constexpr const char* kScheduleNames[] = {"sequential", "rounds", "alone_check"};
}  // namespace

const char* to_string(Direction d) { return kDirectionNames[static_cast<int>(d)]; }
const char* to_string(Mode m) { return kModeNames[static_cast<int>(m)]; }
std::optional<Direction> parse_direction(const std::string& s) {
  return parse_enum<Direction>(s, kDirectionNames);
}
std::optional<Mode> parse_mode(const std::string& s) { return parse_enum<Mode>(s, kModeNames); }
const char* to_string(Pattern p) { return kPatternNames[static_cast<int>(p)]; }
const char* to_string(Schedule s) { return kScheduleNames[static_cast<int>(s)]; }
std::optional<Pattern> parse_pattern(const std::string& s) { return parse_enum<Pattern>(s, kPatternNames); }
std::optional<Schedule> parse_schedule(const std::string& s) { return parse_enum<Schedule>(s, kScheduleNames); }
std::vector<std::string> pattern_names() { return {std::begin(kPatternNames), std::end(kPatternNames)}; }

}  // namespace p2pbench
