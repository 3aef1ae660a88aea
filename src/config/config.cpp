#include "config/config.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "common/errors.hpp"
#include "common/text_format.hpp"
#include "config/axis.hpp"
#include "config/config_keys.hpp"
#include "config/default_config.hpp"  // generated from configs/default.json
#include "config/settings_section.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

// Names a key with the flag that set it, where one did.
KeyNamer namer_of(const KeyOrigins& origins) {
  return [&origins](const std::string& key) { return key_with_origin(origins, key); };
}

}  // namespace

std::string key_with_origin(const KeyOrigins& origins, const std::string& key) {
  // A nested key ("ldst.blocks[2]") takes the origin of its closest overridden parent.
  for (std::string k = key; !k.empty();) {
    const auto it = origins.find(k);
    if (it != origins.end()) return key + " (from " + it->second + ")";
    const size_t cut = k.find_last_of(".[");
    if (cut == std::string::npos) break;
    k = k.substr(0, cut);
  }
  return key;
}

json parse_json_text(const std::string& text, const std::string& key, const std::string& source) {
  // The parser reports each object's and array's depth as it opens: refuse absurd nesting
  // before it is built (no config needs more than a few levels).
  const json::parser_callback_t depth_guard = [&](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxConfigDepth)
      throw InputError(key, source, "nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
    return true;
  };
  try {
    return json::parse(text, depth_guard);
  } catch (const json::parse_error& e) {
    throw InputError(key, source, std::string("invalid JSON: ") + e.what());
  }
}

json default_config_document() {
  return parse_json_text(kDefaultConfigJson, "configs/default.json (built in)", "(built in)");
}

const std::vector<std::pair<std::string, std::string>>& config_key_help() {
  static const std::vector<std::pair<std::string, std::string>> keys = [] {
    std::vector<std::pair<std::string, std::string>> list = {
      {"label", "name of this run/system, recorded in the results (string)"},
      {"description", "free text about the config (ignored)"},
      {"methods", "[\"ce\", \"ldst\", \"tma\"] between the GPUs; [\"h2d\", \"d2h\"] each GPU's host link; "
                  "baselines [\"staged\" (through host memory), \"nccl\" (send/recv)]; [\"latency_signal\", "
                  "\"latency_read\", \"latency_ce\", \"atomic\"]"},
      {"directions", "[\"push\", \"pull\"]: push = the source GPU writes, pull = the destination GPU reads"},
      {"modes", "[\"uni\", \"bidir\"]: one direction at a time, or both ranks at once"},
      {"sizes", "message sizes in bytes: a list, or {\"min\", \"max\", \"factor\"}; \"64KiB\" style allowed"},
      {"samples", "timed samples per case (integer >= 1, default 10)"},
      {"min_sample_time_ms", "each sample repeats the transfer for at least this long (> 0 to 60000 ms, default 1.0)"},
      {"warmup_time_ms", "untimed warm-up per case (0 to 600000 ms, default 10)"},
      {"verify", "check every byte after every sample (default true)"},
      {"buffer_pool_bytes", "rotate through this much memory per buffer so small messages miss L2 (0 = off)"},
      {"gate_timeout_s", "a GPU waiting at the start gate gives up after this long (1 to 3600 s, default 10)"},
      {"allocator", "how the transfer buffers are allocated and mapped by the peers: \"legacy\" (cudaMalloc + CUDA "
                    "IPC, the default), \"vmm\" (cuMemCreate + a file descriptor taken with pidfd_getfd), \"fabric\" "
                    "(cuMemCreate + a fabric handle, needs an IMEX channel); docs/allocators.md"},
    };
    // Each method that sweeps kernel-shape axes has a section of them, named after it.
    for (const MethodInfo& m : method_registry()) {
      if (m.swept.empty()) continue;
      std::string axes;
      for (const SweptAxis& a : m.swept) axes += (axes.empty() ? "{\"" : ", \"") + std::string(to_string(a.axis)) + "\"";
      list.push_back({m.name, axes + "} axes of the " + m.title});
    }
    list.insert(list.end(), {
      {"latency", "{\"payload_bytes\", \"protocols\" (latency_signal: flag_in_data, payload_then_flag, tma_then_flag, "
                  "ce_then_flag), \"round_trips\" (ce_then_flag: at most 16 a sample), \"ce_copies\"} of the latency "
                  "methods; latency_read "
                  "axes {\"read_protocols\" (plain, relaxed_sys, absolute, generic), \"read_launch\" (single, every_sm), "
                  "\"read_timing\" (kernel_timer, events), \"read_owner\" (idle, busy), \"read_loads\" (per launch), "
                  "\"read_stride_bytes\", \"read_footprint_bytes\"}; \"load\" {\"method\" (" +
                      method_list([](const MethodInfo& m) { return m.runs_as_load; }) +
                      "), \"direction\", \"pattern\" (all_to_all, ring, bisection), \"bytes\"}: measure each "
                      "latency case again while that traffic runs between the ranks outside its pair"},
      {"atomic", "{\"types\", \"patterns\", \"blocks\", \"threads\", \"ops_per_thread\", \"hot_addresses\"} of remote atomics"},
      {"host", "{\"memory\" (pinned: cudaHostAlloc, the default; registered: 4 KiB pages + cudaHostRegister; "
               "huge_pages: 2 MiB pages + cudaHostRegister; pageable: never registered), \"numa\" (local, the default; "
               "remote)} of the host-link methods: one case per kind and placement (docs/host-memory.md)"},
    });
    // The sections of settings methods declare with their registration, each once.
    for (const MethodInfo& m : method_registry())
      if (m.settings && std::none_of(list.begin(), list.end(), [&m](const auto& k) { return k.first == m.settings->key; }))
        list.push_back({m.settings->key, m.settings->help});
    list.insert(list.end(), {
      {"interference", "{\"workloads\", \"gemm\": {m, n, k, \"operands\" (gaussian: full-entropy bf16, the default; eighths: 17 "
                       "values, low entropy, faster)}, \"hbm_bytes\", \"engines\", \"sm_partitions\", \"both_gpus_busy\", \"transfer_high_priority\"} "
                       "of the interference method (a transfer beside a GEMM or an HBM stream)"},
      {"burn_in", "{\"duration_s\" (--duration), \"window_s\" (--window, default 10), \"margin\" (default 0.10: a "
                  "window whose slowest transfer of a flow is below (1 - margin) x the flow's median is slow), "
                  "\"inject_slow\" {\"window\", \"src_rank\", \"dst_rank\", \"factor\"} (a test knob)}: repeat the "
                  "plan's cases for duration_s in windows, with NVML per window and verdicts (docs/burn-in.md)"},
    });
    const auto& patterns = pattern_key_help();
    list.insert(list.end(), patterns.begin(), patterns.end());
    return list;
  }();
  return keys;
}

json read_json_file(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  if (!in) throw InputError(key, "\"" + path + "\"", "cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_json_text(text.str(), key, "\"" + path + "\"");
}

namespace {

// What to measure: label, methods, directions, modes and sizes.
void parse_sweep_keys(const json& doc, const KeyNamer& name, Config& c) {
  if (doc.contains("label")) {
    if (!doc["label"].is_string() || doc["label"].get<std::string>().empty())
      throw InputError(name("label"), doc["label"].dump(), "must be a non-empty string");
    c.label = doc["label"].get<std::string>();
  }
  if (doc.contains("methods")) c.methods = parse_name_list<Method>(doc["methods"], "methods", name, method_names(), parse_method);
  if (doc.contains("directions"))
    c.directions = parse_name_list<Direction>(doc["directions"], "directions", name, {"push", "pull"}, parse_direction);
  if (doc.contains("modes")) c.modes = parse_name_list<Mode>(doc["modes"], "modes", name, {"uni", "bidir"}, parse_mode);
  // Latency and atomic methods take their sizes from their own sections.
  const bool needs_sizes = std::any_of(c.methods.begin(), c.methods.end(),
                                       [](Method m) { return !is_probe(m); });
  if (!doc.contains("sizes") && needs_sizes)
    throw InputError(name("sizes"), "(missing)", "the config must list message sizes");
  if (doc.contains("sizes") && !(doc["sizes"].is_null() && !needs_sizes)) {
    try {
      c.sizes = parse_axis(doc["sizes"], "sizes", true);
    } catch (const InputError& e) {
      throw InputError(name(e.key()) + std::string(e.what()).substr(e.key().size()));
    }
  }
}

// How each case is measured: samples, their time, the warm-up, the gate, verification, the pool.
void parse_measurement_keys(const json& doc, const KeyNamer& name, Config& c) {
  if (doc.contains("samples")) {
    const json& v = doc["samples"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 100000)
      throw InputError(name("samples"), v.dump(), "must be an integer from 1 to 100000");
    c.samples = static_cast<int>(v.get<int64_t>());
  }
  if (doc.contains("min_sample_time_ms"))
    c.min_sample_time_ms =
        parse_number_in(doc["min_sample_time_ms"], name("min_sample_time_ms"), 0, kMaxSampleTimeMs, true);
  if (doc.contains("warmup_time_ms"))
    c.warmup_time_ms = parse_number_in(doc["warmup_time_ms"], name("warmup_time_ms"), 0, kMaxWarmupTimeMs, false);
  if (doc.contains("gate_timeout_s"))
    c.gate_timeout_s =
        parse_number_in(doc["gate_timeout_s"], name("gate_timeout_s"), kMinGateTimeoutS, kMaxGateTimeoutS, false);
  if (doc.contains("verify")) {
    if (!doc["verify"].is_boolean()) throw InputError(name("verify"), doc["verify"].dump(), "must be true or false");
    c.verify = doc["verify"].get<bool>();
  }
  if (doc.contains("allocator")) {
    const json& v = doc["allocator"];
    const auto parsed = v.is_string() ? parse_allocator(v.get<std::string>()) : std::nullopt;
    if (!parsed) throw InputError(name("allocator"), v.dump(), expected_one_of(v, allocator_names()));
    c.allocator = *parsed;
  }
  if (doc.contains("buffer_pool_bytes")) {
    const json& v = doc["buffer_pool_bytes"];
    c.buffer_pool_bytes = (v.is_number_integer() && v.get<int64_t>() == 0) ? 0 : parse_size(v, name("buffer_pool_bytes"));
  }
}

// A method's section of swept kernel-shape axes ("ldst": {"blocks": ...}), as the registry
// declares them: each key an axis of counts (smem_bytes: sizes), each value within its rule.
void parse_kernel_axes(const json& doc, const KeyNamer& name, const MethodInfo& m, KernelAxes& out) {
  const std::string section = m.name;
  if (!doc.contains(section)) return;
  const json& s = doc[section];
  if (!s.is_object()) throw InputError(name(section), s.dump(), "must be an object of axes");
  std::set<std::string> known;
  for (const SweptAxis& a : m.swept) known.insert(to_string(a.axis));
  reject_unknown_keys(s, known, section + ".", name);
  for (const SweptAxis& a : m.swept) {
    const std::string key = to_string(a.axis);
    if (!s.contains(key)) continue;
    try {
      out.set(m.id, a.axis, parse_axis(s[key], section + "." + key, is_byte_axis(a.axis), axis_allows_zero(a.axis)));
    } catch (const InputError& e) {
      throw InputError(name(e.key()) + std::string(e.what()).substr(e.key().size()));
    }
  }
}

// The sections of settings methods declare (MethodInfo::settings), each once: checked here, so a
// typo stops the run before any case (exit 2) rather than skipping every case of its methods.
void parse_method_settings(const json& doc, const KeyNamer& name, std::map<std::string, json>& out) {
  for (const MethodInfo& m : method_registry()) {
    const SettingsSection* s = m.settings;
    if (!s || out.count(s->key)) continue;
    const auto it = doc.find(s->key);
    out[s->key] = s->parse(it == doc.end() ? nullptr : &*it, name);
  }
}

}  // namespace

Config parse_config(const json& doc, const KeyOrigins& origins) {
  const KeyNamer name = namer_of(origins);
  if (!doc.is_object()) throw InputError("config", doc.dump().substr(0, 40), "the config must be a JSON object");
  std::set<std::string> allowed;
  for (const auto& [key, help] : config_key_help()) allowed.insert(key);
  reject_unknown_keys(doc, allowed, "", name);

  Config c;
  parse_sweep_keys(doc, name, c);
  parse_measurement_keys(doc, name, c);
  parse_probe_sections(doc, name, c.latency, c.atomic);
  if (doc.contains("interference")) parse_interference_section(doc["interference"], name, c.interference);
  if (doc.contains("host")) parse_host_section(doc["host"], name, c.host);
  parse_method_settings(doc, name, c.method_settings);
  if (doc.contains("burn_in")) parse_burn_in_section(doc["burn_in"], name, c.burn_in);
  parse_pattern_keys(doc, name, c.plan);
  for (const MethodInfo& m : method_registry())
    if (!m.swept.empty()) parse_kernel_axes(doc, name, m, c.kernel_axes);
  return c;
}

const std::vector<uint64_t>& KernelAxes::of(Method m, ShapeAxis a) const {
  const auto it = values_.find({m, a});
  if (it != values_.end()) return it->second;
  if (const SweptAxis* s = swept_axis(m, a)) return s->defaults;
  throw std::logic_error(std::string("method ") + to_string(m) + " sweeps no " + to_string(a));
}

const nlohmann::json& Config::settings_of(Method m) const {
  static const nlohmann::json kNone;
  const SettingsSection* s = method_info(m).settings;
  const auto it = s ? method_settings.find(s->key) : method_settings.end();
  return it == method_settings.end() ? kNone : it->second;
}

std::vector<Method> Config::methods_used() const {
  std::vector<Method> used;
  auto add = [&used](Method m) {
    if (std::find(used.begin(), used.end(), m) == used.end()) used.push_back(m);
  };
  for (Method m : methods) {
    add(m);
    if (is_interference(m))
      for (Method engine : interference.engines) add(engine);
    if (is_latency(m) && latency.load) add(latency.load->method);
  }
  return used;
}

namespace {

json names_of(const std::vector<Method>& list) {
  json out = json::array();
  for (Method m : list) out.push_back(to_string(m));
  return out;
}

json latency_json(const LatencySettings& latency) {
  json out = {{"payload_bytes", latency.payload_bytes},
              {"protocols", latency.protocols},
              {"round_trips", latency.round_trips},
              {"read_loads", latency.read_loads},
              {"read_protocols", latency.read_protocols},
              {"read_launch", latency.read_launch},
              {"read_timing", latency.read_timing},
              {"read_owner", latency.read_owner},
              {"read_stride_bytes", latency.read_stride_bytes},
              {"read_footprint_bytes", latency.read_footprint_bytes},
              {"ce_copies", latency.ce_copies}};
  if (latency.load)
    out["load"] = {{"method", to_string(latency.load->method)},
                   {"direction", to_string(latency.load->direction)},
                   {"pattern", to_string(latency.load->pattern)},
                   {"bytes", latency.load->bytes}};
  return out;
}

json atomic_json(const AtomicSettings& atomic) {
  return {{"types", atomic.types},       {"patterns", atomic.patterns},
          {"blocks", atomic.blocks},     {"threads", atomic.threads},
          {"ops_per_thread", atomic.ops_per_thread}, {"hot_addresses", atomic.hot_addresses}};
}

}  // namespace

json Config::to_json() const {
  auto names = [](const auto& list) {
    json out = json::array();
    for (auto v : list) out.push_back(to_string(v));
    return out;
  };
  json out{{"label", label},
           {"methods", names_of(methods)},
           {"directions", names(directions)},
           {"modes", names(modes)},
           {"sizes", sizes.empty() ? json() : json(sizes)},
           {"samples", samples},
           {"min_sample_time_ms", min_sample_time_ms},
           {"warmup_time_ms", warmup_time_ms},
           {"verify", verify},
           {"buffer_pool_bytes", buffer_pool_bytes},
           {"gate_timeout_s", gate_timeout_s},
           {"allocator", p2pbench::to_string(allocator)}};
  out.update(plan.to_json());  // the pattern keys are top-level keys
  if (burn_in.enabled()) out["burn_in"] = burn_in.to_json();
  const std::vector<Method> used = methods_used();
  auto any = [&used](bool (*test)(const MethodInfo&)) {
    return std::any_of(used.begin(), used.end(), [test](Method m) { return test(method_info(m)); });
  };
  // The sections of the kinds of methods the run uses.
  if (any([](const MethodInfo& m) { return m.kind == MethodKind::kLatency; })) out["latency"] = latency_json(latency);
  if (any([](const MethodInfo& m) { return m.kind == MethodKind::kAtomic; })) out["atomic"] = atomic_json(atomic);
  if (any([](const MethodInfo& m) { return m.kind == MethodKind::kInterference; }))
    out["interference"] = interference.to_json();
  if (any([](const MethodInfo& m) { return m.kind == MethodKind::kHostLink; })) out["host"] = host.to_json();
  // The sections of settings the methods used declare.
  for (Method m : used)
    if (const SettingsSection* s = method_info(m).settings) out[s->key] = settings_of(m);
  // The section of each method used that sweeps axes of its own.
  for (Method m : used)
    for (const SweptAxis& a : method_info(m).swept) out[to_string(m)][to_string(a.axis)] = kernel_axes.of(m, a.axis);
  return out;
}

}  // namespace p2pbench
