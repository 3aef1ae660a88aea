#include "sweep/case_spec.hpp"

namespace p2pbench {

namespace {
template <typename E, size_t N>
std::optional<E> parse_enum(const std::string& s, const char* const (&names)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (s == names[i]) return static_cast<E>(i);
  return std::nullopt;
}
constexpr const char* kMethodNames[] = {"ce", "ldst", "tma", "h2d", "d2h", "staged", "nccl"};
constexpr const char* kDirectionNames[] = {"push", "pull"};
constexpr const char* kModeNames[] = {"uni", "bidir"};
}  // namespace

const char* to_string(Method m) { return kMethodNames[static_cast<int>(m)]; }
const char* to_string(Direction d) { return kDirectionNames[static_cast<int>(d)]; }
const char* to_string(Mode m) { return kModeNames[static_cast<int>(m)]; }
std::optional<Method> parse_method(const std::string& s) { return parse_enum<Method>(s, kMethodNames); }
std::optional<Direction> parse_direction(const std::string& s) {
  return parse_enum<Direction>(s, kDirectionNames);
}
std::optional<Mode> parse_mode(const std::string& s) { return parse_enum<Mode>(s, kModeNames); }
std::vector<std::string> method_names() { return {std::begin(kMethodNames), std::end(kMethodNames)}; }

MethodAxes axes_of(Method m) {
  switch (m) {
    case Method::kCe: return {};
    case Method::kLdst: return {true, true, true, false, false};
    case Method::kTma: return {true, false, false, true, true};
    case Method::kH2d:
    case Method::kD2h:
    case Method::kStaged:
    case Method::kNccl: return {};
  }
  return {};
}

std::string CaseSpec::name() const {
  std::string n = std::string(to_string(method)) + "/" + to_string(direction) + "/" + to_string(mode);
  if (mode == Mode::kUni) n += "/" + std::to_string(src_rank) + "->" + std::to_string(dst_rank);
  n += "/bytes:" + std::to_string(bytes);
  if (blocks) n += "/blocks:" + std::to_string(*blocks);
  if (threads) n += "/threads:" + std::to_string(*threads);
  if (unroll) n += "/unroll:" + std::to_string(*unroll);
  if (smem_bytes) n += "/smem:" + std::to_string(*smem_bytes);
  if (stages) n += "/stages:" + std::to_string(*stages);
  return n;
}

std::vector<Orientation> orientations_of(const CaseSpec& c) {
  if (c.mode == Mode::kBidir) return {{0, 1}, {1, 0}};
  return {{c.src_rank, c.dst_rank}};
}

}  // namespace p2pbench
