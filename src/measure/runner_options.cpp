#include "measure/runner_options.hpp"

#include <string>

#include "common/errors.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {

RunnerOptions RunnerOptions::from(const Config& c, double timeout_scale, Watchdog* watchdog, bool sanitizer_mode) {
  RunnerOptions o;
  o.samples = c.samples;
  o.min_sample_time_ms = c.min_sample_time_ms;
  o.warmup_time_ms = c.warmup_time_ms;
  o.verify = c.verify;
  o.buffer_pool_bytes = c.buffer_pool_bytes;
  o.gate_timeout_s = c.gate_timeout_s;
  o.timeout_scale = timeout_scale;
  o.latency = c.latency;
  o.watchdog = watchdog;
  o.sanitizer_mode = sanitizer_mode;
  return o;
}

BufferLayout BufferLayout::for_case(uint64_t bytes, uint64_t pool_bytes) {
  // A size within 4 KiB of 2^64 would round up to a stride of 0 (every slot at one address):
  // refused here as well as up front (device_memory_need), whoever calls this.
  const auto stride = buffer_slot_stride(bytes);
  if (!stride)
    throw InputError("sizes", std::to_string(bytes), "rounded up to whole buffer slots it does not fit in 64 bits");
  BufferLayout l;
  l.stride = *stride;
  l.slots = (pool_bytes > l.stride) ? pool_bytes / l.stride : 1;
  return l;
}

}  // namespace p2pbench
