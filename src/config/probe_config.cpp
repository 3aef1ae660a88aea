#include "config/probe_config.hpp"

#include <algorithm>

#include "common/errors.hpp"
#include "config/axis.hpp"
#include "vocab/variants.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

// latency_read's axes: which chase, how it is launched and timed, its chain's geometry.
void parse_read_chase(const json& s, const KeyNamer& name, LatencySettings& l) {
  if (s.contains("read_loads")) l.read_loads = parse_count_axis(s["read_loads"], name("latency.read_loads"), 10000000);
  if (s.contains("read_protocols"))
    l.read_protocols = parse_name_list(s["read_protocols"], "latency.read_protocols", name, read_load_names());
  if (s.contains("read_launch"))
    l.read_launch = parse_name_list(s["read_launch"], "latency.read_launch", name, read_launch_names());
  if (s.contains("read_timing"))
    l.read_timing = parse_name_list(s["read_timing"], "latency.read_timing", name, read_timing_names());
  if (s.contains("read_owner"))
    l.read_owner = parse_name_list(s["read_owner"], "latency.read_owner", name, read_owner_names());
  if (s.contains("read_stride_bytes"))
    l.read_stride_bytes = parse_axis(s["read_stride_bytes"], name("latency.read_stride_bytes"), true);
  if (s.contains("read_footprint_bytes"))
    l.read_footprint_bytes = parse_axis(s["read_footprint_bytes"], name("latency.read_footprint_bytes"), true);
  for (size_t i = 0; i < l.read_stride_bytes.size(); ++i)
    if (l.read_stride_bytes[i] < 8 || l.read_stride_bytes[i] % 8 != 0 || l.read_stride_bytes[i] > (1u << 20))
      throw InputError(name("latency.read_stride_bytes") + "[" + std::to_string(i) + "]",
                       std::to_string(l.read_stride_bytes[i]), "a stride is a multiple of 8 bytes from 8 to 1 MiB");
  for (size_t i = 0; i < l.read_footprint_bytes.size(); ++i) {
    const uint64_t f = l.read_footprint_bytes[i];
    const uint64_t largest_stride = *std::max_element(l.read_stride_bytes.begin(), l.read_stride_bytes.end());
    if (f < largest_stride || f > (uint64_t{1} << 32))
      throw InputError(name("latency.read_footprint_bytes") + "[" + std::to_string(i) + "]", std::to_string(f),
                       "the chain must hold at least one element of every read_stride_bytes (" +
                           std::to_string(largest_stride) + " bytes) and at most 4 GiB");
  }
}

// "latency.load": {"method": "ce" | "ldst" | "tma", "direction", "pattern", "bytes"}.
LatencyLoad parse_latency_load(const json& s, const KeyNamer& name) {
  if (!s.is_object()) throw InputError(name("latency.load"), s.dump(), "must be an object");
  reject_unknown_keys(s, {"method", "direction", "pattern", "bytes"}, "latency.load.", name);
  LatencyLoad l;
  auto text = [&](const char* key) {
    if (!s[key].is_string()) throw InputError(name(std::string("latency.load.") + key), s[key].dump(), "must be a string");
    return s[key].get<std::string>();
  };
  if (s.contains("method")) {
    const auto m = parse_method(text("method"));
    if (!m || !method_info(*m).runs_as_load)
      throw InputError(name("latency.load.method"), s["method"].dump(),
                       "must be one of " + method_list([](const MethodInfo& i) { return i.runs_as_load; }));
    l.method = *m;
  }
  if (s.contains("direction")) {
    const auto d = parse_direction(text("direction"));
    if (!d) throw InputError(name("latency.load.direction"), s["direction"].dump(), "must be push or pull");
    l.direction = *d;
  }
  if (s.contains("pattern")) {
    const auto p = parse_pattern(text("pattern"));
    if (!p || !(*p == Pattern::kAllToAll || *p == Pattern::kRing || *p == Pattern::kBisection))
      throw InputError(name("latency.load.pattern"), s["pattern"].dump(), "must be one of all_to_all, ring, bisection");
    l.pattern = *p;
  }
  if (s.contains("bytes")) {
    const auto sizes = parse_axis(s["bytes"], name("latency.load.bytes"), true);
    if (sizes.size() != 1) throw InputError(name("latency.load.bytes"), s["bytes"].dump(), "must be one size");
    l.bytes = sizes[0];
  }
  return l;
}

void parse_latency_section(const json& s, const KeyNamer& name, LatencySettings& l) {
  reject_unknown_keys(s,
                      {"payload_bytes", "protocols", "round_trips", "read_loads", "ce_copies", "read_protocols",
                       "read_launch", "read_timing", "read_owner", "read_stride_bytes", "read_footprint_bytes", "load"},
                      "latency.", name);
  if (s.contains("payload_bytes")) l.payload_bytes = parse_axis(s["payload_bytes"], name("latency.payload_bytes"), true);
  if (s.contains("protocols")) l.protocols = parse_name_list(s["protocols"], "latency.protocols", name, signal_protocol_names());
  if (s.contains("round_trips")) l.round_trips = parse_count(s["round_trips"], name("latency.round_trips"), 1000000);
  if (s.contains("ce_copies")) l.ce_copies = parse_count(s["ce_copies"], name("latency.ce_copies"), 100000);
  if (s.contains("load")) l.load = parse_latency_load(s["load"], name);
  parse_read_chase(s, name, l);
  for (size_t i = 0; i < l.payload_bytes.size(); ++i)
    if (l.payload_bytes[i] % 4 != 0 || l.payload_bytes[i] > (64u << 10))
      throw InputError(name("latency.payload_bytes") + "[" + std::to_string(i) + "]", std::to_string(l.payload_bytes[i]),
                       "payloads are multiples of 4 bytes up to 64 KiB");
}

void parse_atomic_section(const json& s, const KeyNamer& name, AtomicSettings& a) {
  reject_unknown_keys(s, {"types", "patterns", "blocks", "threads", "ops_per_thread", "hot_addresses"}, "atomic.", name);
  if (s.contains("types")) a.types = parse_name_list(s["types"], "atomic.types", name, atomic_type_names());
  if (s.contains("patterns")) a.patterns = parse_name_list(s["patterns"], "atomic.patterns", name, atomic_pattern_names());
  if (s.contains("blocks")) a.blocks = parse_axis(s["blocks"], name("atomic.blocks"), false);
  if (s.contains("threads")) a.threads = parse_axis(s["threads"], name("atomic.threads"), false);
  if (s.contains("ops_per_thread")) a.ops_per_thread = parse_count(s["ops_per_thread"], name("atomic.ops_per_thread"), 1u << 20);
  if (s.contains("hot_addresses")) a.hot_addresses = parse_count(s["hot_addresses"], name("atomic.hot_addresses"), 1u << 20);
}

}  // namespace

void parse_probe_sections(const json& doc, const KeyNamer& name, LatencySettings& latency, AtomicSettings& atomic) {
  if (doc.contains("latency")) parse_latency_section(doc["latency"], name, latency);
  if (doc.contains("atomic")) parse_atomic_section(doc["atomic"], name, atomic);
}

}  // namespace p2pbench
