// Command-line options of the p2pbench driver and how they override config keys.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/fault_injection.hpp"
#include "config/config.hpp"

// CLI11 is declared, not included: this header reaches every driver source through session.hpp,
// and CLI/CLI.hpp is the slowest header the build reads (slower than nlohmann/json). Only the
// files that build or parse a command line (cli_options.cpp, the two main.cpp) include it.
namespace CLI {
class App;
class Error;
}  // namespace CLI

namespace p2pbench {

struct CliOptions {
  std::string config_path;
  std::string output_path = "p2pbench-results.json";
  std::string label;
  std::string devices;  // per rank, comma-separated: index, UUID or PCI bus id
  bool allow_same_device = false;
  bool no_cpu_binding = false;
  bool no_p2p = false;
  bool dry_run = false;
  bool force = false;  // --force: replace an existing results file that is not a checkpoint
  bool topology = false;
  bool list_methods = false;
  bool json = false;  // with --list-methods
  bool progress = false;
  bool no_verify = false;
  double timeout_scale = 1.0;
  bool timeout_scale_given = false;  // set after parsing: --timeout-scale was on the command line
  bool sanitize = false;             // --sanitize: run so compute-sanitizer can check every kernel
  // --ranks N (with --dry-run only): plan for N ranks, one GPU each, one node; 0 = not given
  // (the dry run plans for 2; a run's group is the MPI world).
  int ranks = 0;
  // --ranks-per-node K: the node override (docs/groups.md): each K consecutive ranks of a host
  // are a node of their own, so cross-node paths can be exercised on one host; 0 = off.
  int ranks_per_node = 0;
  // --expect FILE: expected values checked at the end (judgement/expectations.hpp). main() parses
  // the file before the run into `expectations` (null without --expect).
  std::string expect_path;
  nlohmann::json expectations;
  // P2PBENCH_FAULT, parsed and checked against the plan before MPI starts (tests only).
  std::optional<FaultPlan> fault;
  // Config overrides, empty when not given.
  std::string min_bytes, max_bytes, step_factor, sizes;
  std::string samples, min_sample_time, warmup_time, buffer_pool;
  std::string allocator;  // "allocator": legacy | vmm | fabric
  std::string duration, window;  // "burn_in": duration_s, window_s
  std::string methods, directions, modes;
  std::string patterns, schedule;  // "patterns", "matrix.schedule"
  // The axis flags (--blocks, --smem, ...: vocab/shape_axes.cpp), by axis; absent when not given.
  std::map<ShapeAxis, std::string> axis_values;
  // --METHOD-blocks: the blocks of one SM copy kernel that may run as a load (--ldst-blocks,
  // --tma-blocks), by method name.
  std::map<std::string, std::string> method_blocks;
};

// Declares every flag on `app`, with help that teaches (examples and config keys in the footer).
void add_cli_options(CLI::App& app, CliOptions& options);

// CLI11's error as the program (`app`'s name) prints it: the message, for an unknown flag the
// flags it was probably meant to be ("did you mean --samples?"), and where to read about them.
// `value_flags`: flags another parser took before CLI11, only in the form --flag=VALUE (Google
// Benchmark's); one of them left over was given without its '=VALUE', and the hint says so.
std::string cli_failure_message(const CLI::App& app, const CLI::Error& e, const std::vector<std::string>& value_flags = {});

// Applies the flags to the config document, recording which flag set each key.
void apply_overrides(nlohmann::json& doc, const CliOptions& options, KeyOrigins& origins);

// The largest group --ranks plans for.
constexpr int kMaxDryRunRanks = 1024;

// Flags that only make sense together: --ranks needs --dry-run. Throws InputError naming the flag.
void check_flag_combinations(const CliOptions& options);

}  // namespace p2pbench
