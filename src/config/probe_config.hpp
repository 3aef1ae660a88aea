// The probes' sections of the config: "latency" (latency_signal, latency_read, latency_ce and
// the load beside them) and "atomic". Their axes are expanded by plan/probe_axes.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config_keys.hpp"
#include "vocab/flows.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

// Latency under load: every latency case is measured a second time while these
// flows run on the ranks outside its pair (the "latency.load" section).
struct LatencyLoad {
  Method method = kDefaultMethod;
  Direction direction = Direction::kPush;
  Pattern pattern = Pattern::kAllToAll;  // all_to_all, ring (shift 1) or bisection of the other ranks
  uint64_t bytes = uint64_t{256} << 20;
};

struct LatencySettings {
  std::vector<uint64_t> payload_bytes{4, 8, 64, 1024, 4096, 65536};  // latency_signal, latency_ce
  std::vector<std::string> protocols{"flag_in_data", "payload_then_flag"};
  uint64_t round_trips = 10000;  // per latency_signal sample
  // latency_read: one case per combination of these axes (see ReadChase in sweep/case_spec.hpp).
  std::vector<uint64_t> read_loads{20000};  // dependent loads per launch
  std::vector<std::string> read_protocols{"plain", "relaxed_sys", "absolute"};
  std::vector<std::string> read_launch{"single"};
  std::vector<std::string> read_timing{"kernel_timer"};
  std::vector<std::string> read_owner{"idle"};
  std::vector<uint64_t> read_stride_bytes{128};
  std::vector<uint64_t> read_footprint_bytes{uint64_t{2} << 20};  // the chain's bytes (the row's bytes)
  uint64_t ce_copies = 200;      // copies per latency_ce sample
  std::optional<LatencyLoad> load;
};

struct AtomicSettings {
  std::vector<std::string> types{"u32", "f32", "f32x4", "f16x2", "bf16x2"};
  std::vector<std::string> patterns{"distinct", "hot_spot"};
  std::vector<uint64_t> blocks{132};
  std::vector<uint64_t> threads{256};
  uint64_t ops_per_thread = 16;
  uint64_t hot_addresses = 32;
};

// Reads the "latency" and "atomic" sections of `doc` where present (defaults otherwise).
// Throws InputError naming the key and the value.
void parse_probe_sections(const nlohmann::json& doc, const KeyNamer& name, LatencySettings& latency, AtomicSettings& atomic);

}  // namespace p2pbench
