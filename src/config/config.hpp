// The benchmark configuration: read from a JSON file, overridden by flags, validated once.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/burn_in_config.hpp"
#include "config/host_config.hpp"
#include "config/interference_config.hpp"
#include "config/pattern_config.hpp"
#include "config/probe_config.hpp"
#include "vocab/allocators.hpp"
#include "vocab/flows.hpp"
#include "vocab/methods.hpp"
#include "vocab/variants.hpp"

namespace p2pbench {

// The values of every swept kernel-shape axis (the method registry's SweptAxis), by method:
// what the config's section of the method ("ldst": {"blocks": [...]}) set, else the defaults.
class KernelAxes {
 public:
  const std::vector<uint64_t>& of(Method m, ShapeAxis a) const;
  void set(Method m, ShapeAxis a, std::vector<uint64_t> values) { values_[{m, a}] = std::move(values); }

 private:
  std::map<std::pair<Method, ShapeAxis>, std::vector<uint64_t>> values_;
};

// Bounds of the times a config may ask for: long enough for any real use, short enough that a
// typo cannot make a case wait for days (or give up before the ranks can meet).
constexpr double kMaxSampleTimeMs = 60000.0;   // one minute per sample
constexpr double kMaxWarmupTimeMs = 600000.0;  // ten minutes of warm-up per case
constexpr double kMinGateTimeoutS = 1.0;
constexpr double kMaxGateTimeoutS = 3600.0;

struct Config {
  std::string label = "p2pbench";
  std::vector<Method> methods{kDefaultMethod};
  std::vector<Direction> directions{Direction::kPush, Direction::kPull};
  std::vector<Mode> modes{Mode::kUni, Mode::kBidir};
  std::vector<uint64_t> sizes;
  int samples = 10;
  double min_sample_time_ms = 1.0;
  double warmup_time_ms = 10.0;
  bool verify = true;
  uint64_t buffer_pool_bytes = 0;  // 0: one buffer; else rotate slots through a pool this large
  double gate_timeout_s = 10.0;
  Allocator allocator = Allocator::kLegacy;  // how the transfer buffers are allocated and mapped (per run)
  KernelAxes kernel_axes;
  LatencySettings latency;
  AtomicSettings atomic;
  InterferenceSettings interference;  // the "interference" section
  HostSettings host;                  // "host": the host-link methods' memory kinds and NUMA placements
  // The sections of settings methods declare (MethodInfo::settings), by key, as parsed: every
  // registered method's, whether the config has it or not.
  std::map<std::string, nlohmann::json> method_settings;
  PatternSettings plan;               // "patterns", "matrix", "sampled", "ring", ..., "flows"
  BurnInSettings burn_in;             // "burn_in": the plan repeated in judged windows

  // The settings of m's own section (MethodInfo::settings); null where it declares none.
  const nlohmann::json& settings_of(Method m) const;
  // The methods whose settings the run reads: its methods, the engines of its interference cases
  // and the method of its latency cases' load, each once.
  std::vector<Method> methods_used() const;
  // The effective configuration, every key the run reads spelled out (recorded in the results'
  // meta): the sections of the methods it uses, none of those it does not.
  nlohmann::json to_json() const;
};

// Where each overridden key came from ("samples" -> "--samples"), so errors name the flag.
using KeyOrigins = std::map<std::string, std::string>;

// Validates `doc` (config file contents with flag overrides applied) into a Config.
// Throws InputError naming the key (and the flag it came from) and the value.
Config parse_config(const nlohmann::json& doc, const KeyOrigins& origins = {});

// "ldst.threads[0] (from --threads)" where a flag set the key or a parent of it, else the key.
std::string key_with_origin(const KeyOrigins& origins, const std::string& key);

// A config nested deeper than this is refused (nothing real needs more than a few levels).
constexpr int kMaxConfigDepth = 64;

// Parses JSON text; InputError naming `key` and `source` on invalid JSON or nesting deeper
// than kMaxConfigDepth.
nlohmann::json parse_json_text(const std::string& text, const std::string& key, const std::string& source);

// Reads and parses a JSON file; InputError on a missing file or invalid JSON.
nlohmann::json read_json_file(const std::string& path, const std::string& key);

// configs/default.json as it was at build time (CMake embeds the file): the sweep that flags
// alone override when no --config is given.
nlohmann::json default_config_document();

// Every key the config file accepts, with a one-line explanation (for --help and the README).
const std::vector<std::pair<std::string, std::string>>& config_key_help();

}  // namespace p2pbench
