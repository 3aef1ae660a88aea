#include "plan/probe_axes.hpp"

#include <limits>

namespace p2pbench {

namespace {

// An axis over a list of the config, each value set by `set`.
template <typename T, typename Set>
ProbeAxis axis(std::string key, const std::vector<T>& values, Set set) {
  return {std::move(key), values.size(), [&values, set](CaseSpec& c, size_t i) { set(c, values[i]); }};
}

// latency_signal: one console table per protocol, then the payloads.
ProbeAxes signal_axes(const LatencySettings& l) {
  return {{axis("latency.protocols", l.protocols, [](CaseSpec& c, const std::string& p) { c.protocol = p; }),
           axis("latency.payload_bytes", l.payload_bytes, [](CaseSpec& c, uint64_t b) { c.bytes = b; })},
          nullptr};
}

// latency_read: one case per combination of the read axes, the load kind fastest (the console
// lists plain, relaxed_sys and absolute of one variant together); bytes = the chain's footprint.
ProbeAxes read_axes(const LatencySettings& l) {
  auto chase = [](CaseSpec& c) -> ReadChase& {
    if (!c.read_chase) c.read_chase = ReadChase{};
    return *c.read_chase;
  };
  return {{axis("latency.read_footprint_bytes", l.read_footprint_bytes, [](CaseSpec& c, uint64_t b) { c.bytes = b; }),
           axis("latency.read_stride_bytes", l.read_stride_bytes,
                [chase](CaseSpec& c, uint64_t s) { chase(c).stride_bytes = s; }),
           axis("latency.read_loads", l.read_loads, [chase](CaseSpec& c, uint64_t n) { chase(c).loads = n; }),
           axis("latency.read_launch", l.read_launch, [chase](CaseSpec& c, const std::string& v) { chase(c).launch = v; }),
           axis("latency.read_timing", l.read_timing, [chase](CaseSpec& c, const std::string& v) { chase(c).timing = v; }),
           axis("latency.read_owner", l.read_owner, [chase](CaseSpec& c, const std::string& v) { chase(c).owner = v; }),
           axis("latency.read_protocols", l.read_protocols,
                [chase](CaseSpec& c, const std::string& v) { chase(c).load = v; })},
          [](CaseSpec& c) { c.protocol = c.read_chase->protocol(); }};
}

ProbeAxes copy_latency_axes(const LatencySettings& l) {
  return {{axis("latency.payload_bytes", l.payload_bytes, [](CaseSpec& c, uint64_t b) { c.bytes = b; })}, nullptr};
}

// atomic: bytes = what one launch adds into (blocks x threads x operations x the type's bytes).
ProbeAxes atomic_axes(const AtomicSettings& a) {
  return {{axis("atomic.types", a.types, [](CaseSpec& c, const std::string& t) { c.atomic_type = t; }),
           axis("atomic.patterns", a.patterns, [](CaseSpec& c, const std::string& p) { c.atomic_pattern = p; }),
           axis("atomic.blocks", a.blocks, [](CaseSpec& c, uint64_t b) { c.blocks = int(b); }),
           axis("atomic.threads", a.threads, [](CaseSpec& c, uint64_t t) { c.threads = int(t); })},
          [&a](CaseSpec& c) {
            c.ops_per_thread = a.ops_per_thread;
            c.hot_addresses = c.atomic_pattern == "hot_spot" ? std::optional<uint64_t>(a.hot_addresses) : std::nullopt;
            c.bytes = uint64_t(*c.blocks) * uint64_t(*c.threads) * a.ops_per_thread * atomic_type_bytes(*c.atomic_type);
          }};
}

void expand_from(size_t k, CaseSpec& c, const ProbeAxes& axes, const std::function<void(const CaseSpec&)>& emit) {
  if (k == axes.axes.size()) {
    CaseSpec done = c;
    if (axes.finish) axes.finish(done);
    emit(done);
    return;
  }
  for (size_t i = 0; i < axes.axes[k].size; ++i) {
    axes.axes[k].apply(c, i);
    expand_from(k + 1, c, axes, emit);
  }
}

}  // namespace

// A probe's axes follow from what its sample is made of (its SampleCost): round trips of a flag,
// dependent loads of a chase, small copies, or atomic operations.
ProbeAxes probe_axes_of(Method m, const Config& config) {
  if (!is_probe(m)) return {};
  if (method_info(m).kind == MethodKind::kAtomic) return atomic_axes(config.atomic);
  switch (method_info(m).cost) {
    case SampleCost::kRoundTrips: return signal_axes(config.latency);
    case SampleCost::kChaseLoads: return read_axes(config.latency);
    case SampleCost::kSmallCopies: return copy_latency_axes(config.latency);
    default: return {};
  }
}

void expand_probe_axes(const CaseSpec& base, const ProbeAxes& axes, const std::function<void(const CaseSpec&)>& emit) {
  if (axes.axes.empty()) return;
  CaseSpec c = base;
  expand_from(0, c, axes, emit);
}

uint64_t probe_axes_count(const ProbeAxes& axes) {
  if (axes.axes.empty()) return 0;
  uint64_t n = 1;
  for (const ProbeAxis& a : axes.axes)
    if (__builtin_mul_overflow(n, uint64_t(a.size), &n)) return std::numeric_limits<uint64_t>::max();
  return n;
}

}  // namespace p2pbench
