// Command line of p2pbench-gbench: the MPI driver's config and sweep flags (declared and applied
// by driver/cli_options.cpp, not copied), minus the driver-only ones, plus --src/--dst.
// Google Benchmark's own --benchmark_* flags are taken out of argv by benchmark::Initialize
// before these are parsed.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "driver/cli_options.hpp"

namespace p2pbench::gbench {

struct GbenchOptions {
  CliOptions driver;        // --config, sweep overrides, --label, --timeout-scale, --allow-same-device
  std::string src = "0";    // GPU that sends in uni cases: index, UUID or PCI bus id
  std::string dst = "1";    // GPU that receives
};

// Declares every flag on `app`.
void add_gbench_options(CLI::App& app, GbenchOptions& options);

// --help: our flags, then Google Benchmark's. A plain function, as benchmark::Initialize wants.
void print_gbench_help();

// Google Benchmark's flags (--benchmark_filter, ...), read from the help it prints: the names a
// misspelt one is set against. Empty where its help could not be captured.
std::vector<std::string> google_benchmark_flags();

// The config file (optional: flags alone may define the sweep) with the flags applied,
// validated. Throws InputError naming the key or flag.
Config load_config(const GbenchOptions& options);

}  // namespace p2pbench::gbench
