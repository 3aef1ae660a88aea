// What a latency_read case measured besides its latency_us, before any formatting (the row's
// "read_chase": results/read_chase_rows.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace p2pbench {

struct ReadChaseSamples {
  std::vector<double> kernel_timer_us;  // per sample, per load: the in-kernel timer
  std::vector<double> events_us;        // per sample, per load: CUDA events around each launch
  double warmup_kernel_timer_us = 0;    // sample 0, recorded apart (TLB misses)
  double warmup_events_us = 0;
  int grid_blocks = 1;                  // the launch's grid (every_sm: one block chases per launch)
  double reader_sm_clock_mhz = 0;       // cycles per ns of the reader's chase, median over samples
  std::vector<unsigned> sm_ids;         // the SMs chased from, ascending
  // every_sm: per SM of sm_ids, its median ns per load and its launches over the samples.
  std::vector<double> per_sm_ns_per_load;
  std::vector<uint64_t> per_sm_launches;
};

}  // namespace p2pbench
