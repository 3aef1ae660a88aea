// The two-rank run: MPI, GPUs, IPC buffers, the sweep, and the results file.
#pragma once

#include "config/config.hpp"
#include "driver/cli_options.hpp"

namespace p2pbench {

// Returns the process exit status (the same on every rank).
int run_benchmark_session(int argc, char** argv, const CliOptions& options, const Config& config);

// `p2pbench --topology`: the GPU pair matrix with link peaks and health, as one process.
int run_topology_report();

}  // namespace p2pbench
