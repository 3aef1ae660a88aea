#include "results/read_chase_rows.hpp"

#include <algorithm>

#include "results/result_writer.hpp"

namespace p2pbench {

using json = nlohmann::json;

nlohmann::json read_chase_json(const CaseSpec& c, const ReadChaseSamples& s) {
  const ReadChase r = c.read_chase.value_or(ReadChase{});
  const uint64_t elements = c.bytes / r.stride_bytes;
  json d = {{"load", r.load},
            {"launch", r.launch},
            {"timing", r.timing},
            {"owner", r.owner},
            {"stride_bytes", r.stride_bytes},
            {"footprint_bytes", c.bytes},
            {"visited_bytes", std::min<uint64_t>(r.loads, elements) * r.stride_bytes},
            {"loads_per_launch", r.loads},
            {"launches_per_sample", r.launch == "every_sm" ? s.grid_blocks : 1},
            {"grid_blocks", s.grid_blocks},
            {"samples_kernel_timer_us", s.kernel_timer_us},
            {"samples_events_us", s.events_us},
            {"warmup", {{"kernel_timer_us", s.warmup_kernel_timer_us}, {"events_us", s.warmup_events_us}}},
            {"reader_sm_clock_mhz", s.reader_sm_clock_mhz},
            {"sm_ids", s.sm_ids},
            {"kernel_timer_us", latency_stats(s.kernel_timer_us)},
            {"events_us", latency_stats(s.events_us)}};
  // Parallel lists (one column each where the report tool flattens rows), in SM order.
  if (r.launch == "every_sm")
    d["per_sm"] = {{"smid", s.sm_ids}, {"ns_per_load", s.per_sm_ns_per_load}, {"launches", s.per_sm_launches}};
  return d;
}

}  // namespace p2pbench
