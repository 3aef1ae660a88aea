// p2pbench: parses flags and the config BEFORE MPI starts, so bad input gets one clear message
// and exit status 2 with no result file; then hands over to the session of the MPI group.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "common/device_connections.hpp"
#include "driver/method_list.hpp"
#include "common/errors.hpp"
#include "common/safe_file.hpp"
#include "config/axis.hpp"
#include "driver/benchmark_session.hpp"
#include "driver/cli_options.hpp"
#include "judgement/expectations.hpp"
#include "plan/plan_report.hpp"
#include "plan/sweep.hpp"
#include "results/output_guard.hpp"

namespace {

using namespace p2pbench;

// Under mpirun every rank validates the same input; only the first rank prints the error.
bool first_rank_by_environment() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var)) return std::atoi(v) == 0;
  }
  return true;
}

// Timeouts become deadlines in nanoseconds: a finite factor that keeps them in range, and not
// so small that ranks could not meet within them (every case would fail as fatal).
void check_timeout_scale(double scale) {
  if (!std::isfinite(scale) || scale < 0.1 || scale > 1e6) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", scale);
    throw InputError("--timeout-scale", text,
                     "must be a finite number from 0.1 to 1000000 (0.1 makes a 10 s deadline 1 s; 1000000 makes "
                     "it 116 days)");
  }
}

// How many ranks the launcher started, where it says (mpirun, srun), so that the plan checked
// before MPI starts is the group's; nullopt outside a launcher.
std::optional<int> world_size_by_environment() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return std::nullopt;
}

// The group the plan is checked (and, for --dry-run, made) for: --ranks or the launcher's size
// (2 where neither says: a run outside a launcher is refused by the session), one GPU per rank
// (a dry run: the GPUs --devices names), one host, split into nodes by --ranks-per-node.
GroupLayout planned_layout(const CliOptions& options, std::string& origin) {
  int ranks = 2;
  std::string source = "two ranks (--ranks N plans for N)";
  if (options.ranks > 0) {
    ranks = options.ranks;
    source = "--ranks " + std::to_string(ranks);
  } else if (const auto world = world_size_by_environment(); world && *world >= 2 && *world <= kMaxDryRunRanks) {
    ranks = *world;
    source = "the launcher's " + std::to_string(ranks) + " ranks";
  }
  // --devices in a dry run: rank r on the GPU of entry r mod their number, as the run selects
  // it (--devices 0,1 with --ranks 4: two ranks per GPU).
  const std::vector<std::string> devices = options.dry_run && !options.devices.empty() ? split_list(options.devices)
                                                                                       : std::vector<std::string>{};
  origin = source + (devices.empty() ? ", one GPU per rank, " : ", GPUs from --devices, ") +
           (options.ranks_per_node > 0 ? "nodes of " + std::to_string(options.ranks_per_node) + " ranks (--ranks-per-node)"
                                       : std::string("one node"));
  std::vector<std::string> gpus;
  for (int r = 0; r < ranks; ++r)
    gpus.push_back(devices.empty() ? "gpu" + std::to_string(r) : "device " + devices[size_t(r) % devices.size()]);
  return GroupLayout::from_identities(gpus, std::vector<std::string>(size_t(ranks), "host"), options.ranks_per_node);
}

// The config (file, or the built-in default.json), flags applied, every limit that needs no GPU
// checked, and the cases for `layout`. Throws InputError naming the key or flag.
std::vector<CaseSpec> load_sweep(const CliOptions& options, const GroupLayout& layout, Config& config) {
  check_timeout_scale(options.timeout_scale);
  check_flag_combinations(options);
  nlohmann::json doc = options.config_path.empty() ? default_config_document()
                                                   : read_json_file(options.config_path, "--config");
  KeyOrigins origins;
  apply_overrides(doc, options, origins);
  config = parse_config(doc, origins);
  validate_kernel_axes(config, origins);
  check_case_count(config, layout);  // before expanding
  std::vector<CaseSpec> cases = expand_cases(config, layout);
  device_memory_need(config, cases, layout, origins);  // throws where the buffers overflow 64 bits
  return cases;
}

// What a run would run, checked before anything starts: the sweep, the expectations, the fault
// switch of the tests and the output path. Throws InputError naming the key or flag.
struct CheckedInput {
  Config config;
  std::vector<CaseSpec> cases;
  std::string layout_origin;
  GroupLayout layout;
};

CheckedInput check_input(CliOptions& options) {
  CheckedInput in;
  in.layout = planned_layout(options, in.layout_origin);
  in.cases = load_sweep(options, in.layout, in.config);
  options.fault = FaultPlan::from_environment();
  if (options.fault) options.fault->check_in_range(in.layout.size(), in.cases.size());
  if (!options.expect_path.empty()) {  // a bad expectations file stops the run before it starts
    options.expectations = load_expectations(options.expect_path);
    check_run_comparable(options.expectations, in.config.to_json(), options.expect_path);
  }
  // A dry run refuses what the run would refuse, so it can vet a job script.
  check_output_path(options.output_path, "--output");
  check_output_replaceable(options.output_path, options.force);
  check_output_not_in_use(options.output_path);
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  // Under MPS the ranks of a node share one pool of hardware queues (common/device_connections.hpp).
  const int connections = device_connections_wanted(mps_daemon_reachable(), node_local_ranks_by_environment());
  const std::string connections_warning = device_connections_warning(connections);
  request_device_connections(connections);
  CliOptions options;
  CLI::App app("p2pbench", "p2pbench");
  add_cli_options(app, options);
  // CLI11's own errors (an unknown flag, a value out of range) read like ours and name the flag.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) { return cli_failure_message(*failed, e); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  const bool printer = first_rank_by_environment();
  if (options.topology) return run_topology_report();
  if (options.list_methods) {
    std::fputs((options.json ? method_list_json() : method_list_text()).c_str(), stdout);
    return kExitOk;
  }

  CheckedInput in;
  try {
    in = check_input(options);
  } catch (const InputError& e) {
    if (printer) std::fprintf(stderr, "p2pbench: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {  // a bug in the checks: still one message, never std::terminate
    if (printer) std::fprintf(stderr, "p2pbench: error: checking the input: %s\n", e.what());
    return kExitBadInput;
  }
  if (options.dry_run) {
    std::fputs(describe_plan(in.config, in.cases, in.layout, in.layout_origin).c_str(), stdout);
    return kExitOk;
  }
  options.timeout_scale_given = app.count("--timeout-scale") > 0;
  if (printer && !connections_warning.empty()) std::fprintf(stderr, "p2pbench: warning: %s\n", connections_warning.c_str());
  // The session handles every failure of the run itself (it keeps what finished); this is the
  // last net, for one before the session exists (MPI start-up, say).
  try {
    return run_benchmark_session(argc, argv, options, in.config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "p2pbench: error: %s\n", e.what());
    return kExitFailure;
  } catch (...) {
    std::fprintf(stderr, "p2pbench: error: an exception of an unknown type ended the run\n");
    return kExitFailure;
  }
}
