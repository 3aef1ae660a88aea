#include "config/burn_in_config.hpp"

#include <cmath>

#include "common/errors.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

constexpr double kMaxDurationS = 7 * 24 * 3600.0;  // a week: longer is a typo
constexpr double kMinWindowS = 0.5;                // a window must hold a few samples of every case
constexpr double kMaxSlowdown = 100.0;

int rank_in(const json& v, const std::string& key) {
  if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1 << 20)
    throw InputError(key, v.dump(), "must be a rank (an integer >= 0)");
  return int(v.get<long long>());
}

SlowFlowInjection parse_injection(const json& v, const KeyNamer& name, int windows) {
  reject_unknown_keys(v, {"window", "src_rank", "dst_rank", "factor"}, "burn_in.inject_slow.", name);
  SlowFlowInjection s;
  if (!v.contains("window")) throw InputError(name("burn_in.inject_slow"), v.dump(), "needs \"window\"");
  const double w = parse_number_in(v["window"], name("burn_in.inject_slow.window"), 0, windows - 1, false);
  if (w != std::floor(w)) throw InputError(name("burn_in.inject_slow.window"), v["window"].dump(), "must be a window index");
  s.window = int(w);
  if (v.contains("src_rank")) s.src_rank = rank_in(v["src_rank"], name("burn_in.inject_slow.src_rank"));
  if (v.contains("dst_rank")) s.dst_rank = rank_in(v["dst_rank"], name("burn_in.inject_slow.dst_rank"));
  if (v.contains("factor"))
    s.factor = parse_number_in(v["factor"], name("burn_in.inject_slow.factor"), 1.0, kMaxSlowdown, true);
  return s;
}

}  // namespace

int BurnInSettings::windows() const {
  return enabled() ? std::max(1, int(std::ceil(duration_s / window_s - 1e-9))) : 0;
}

void parse_burn_in_section(const json& section, const KeyNamer& name, BurnInSettings& out) {
  reject_unknown_keys(section, {"duration_s", "window_s", "margin", "inject_slow"}, "burn_in.", name);
  if (!section.contains("duration_s"))
    throw InputError(name("burn_in"), section.dump(), "needs \"duration_s\" (seconds of load; --duration)");
  out.duration_s = parse_number_in(section["duration_s"], name("burn_in.duration_s"), 0, kMaxDurationS, true);
  if (section.contains("window_s"))
    out.window_s = parse_number_in(section["window_s"], name("burn_in.window_s"), kMinWindowS, kMaxDurationS, false);
  if (out.window_s > out.duration_s)
    throw InputError(name("burn_in.window_s"), json(out.window_s).dump(),
                     "is longer than burn_in.duration_s (" + json(out.duration_s).dump() + " s)");
  if (section.contains("margin")) out.margin = parse_number_in(section["margin"], name("burn_in.margin"), 0, 0.99, true);
  if (section.contains("inject_slow")) out.inject_slow = parse_injection(section["inject_slow"], name, out.windows());
}

json BurnInSettings::to_json() const {
  if (!enabled()) return nullptr;
  json j = {{"duration_s", duration_s}, {"window_s", window_s}, {"margin", margin}, {"inject_slow", nullptr}};
  if (inject_slow)
    j["inject_slow"] = {{"window", inject_slow->window},
                        {"src_rank", inject_slow->src_rank},
                        {"dst_rank", inject_slow->dst_rank},
                        {"factor", inject_slow->factor}};
  return j;
}

}  // namespace p2pbench
