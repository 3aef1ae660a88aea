// The "burn_in" section of the config (and --duration / --window): the plan's cases repeated for
// a set time, in windows that are judged one by one (docs/burn-in.md).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

#include "config/config_keys.hpp"

namespace p2pbench {

// A test knob: in one window, one flow's transfers each wait (factor - 1) times the flow's own
// calibrated transfer time first, so that the window verdicts can be shown to find a slow window.
struct SlowFlowInjection {
  int window = 0;
  int src_rank = 0;
  int dst_rank = 1;
  double factor = 2.0;
};

struct BurnInSettings {
  double duration_s = 0;  // 0: no burn-in (the plan runs once)
  double window_s = 10;
  // A window whose slowest transfer of a flow moves less than (1 - margin) times the flow's
  // median over the burn-in marks that flow intermittent there.
  double margin = 0.10;
  std::optional<SlowFlowInjection> inject_slow;

  bool enabled() const { return duration_s > 0; }
  int windows() const;  // windows of window_s that cover duration_s
  nlohmann::json to_json() const;
};

// Parses `section` (the value of "burn_in") into `out`; InputError naming the key and value.
void parse_burn_in_section(const nlohmann::json& section, const KeyNamer& name, BurnInSettings& out);

}  // namespace p2pbench
