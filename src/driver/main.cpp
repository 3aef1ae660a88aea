// p2pbench: parses flags and the config BEFORE MPI starts, so bad input gets one clear message
// and exit status 2 with no result file; then hands over to the two-rank session.
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "common/errors.hpp"
#include "config/axis.hpp"
#include "driver/benchmark_session.hpp"
#include "driver/cli_options.hpp"
#include "driver/expectations.hpp"
#include "sweep/sweep.hpp"

namespace {

using namespace p2pbench;

// Under mpirun every rank validates the same input; only the first rank prints the error.
bool first_rank_by_environment() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var)) return std::atoi(v) == 0;
  }
  return true;
}

void check_output_writable(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string probe = dir + "/.p2pbench-write-probe";
  std::ofstream out(probe);
  if (!out) throw InputError("--output", path, "cannot write into the directory " + dir);
  out.close();
  std::remove(probe.c_str());
}

int print_dry_run(const Config& config, const std::vector<CaseSpec>& cases) {
  const SweepEstimate e = estimate(config, cases);
  std::printf("p2pbench dry run: config '%s' is valid\n", config.label.c_str());
  std::printf("%zu cases (%zu skipped up front), %d samples each, >= %.3g ms per sample%s\n", e.cases, e.skipped,
              config.samples, config.min_sample_time_ms, config.verify ? ", every byte verified" : ", NOT verified");
  std::printf("estimated: %.1f GB moved (1 GB = 1e9 B), about %.0f s at ~380 GB/s\n\n", e.bytes_moved / 1e9, e.seconds);
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto skip = static_skip_reason(cases[i]);
    std::printf("%5zu  %-70s %12s%s\n", i + 1, cases[i].name().c_str(), format_size(cases[i].bytes).c_str(),
                skip ? ("  skipped: " + *skip).c_str() : "");
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CliOptions options;
  CLI::App app("p2pbench", "p2pbench");
  add_cli_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  const bool printer = first_rank_by_environment();
  if (options.topology) return run_topology_report();

  Config config;
  std::vector<CaseSpec> cases;
  try {
    if (options.config_path.empty()) throw InputError("--config", "(missing)", "a config file is required (see configs/)");
    nlohmann::json doc = read_json_file(options.config_path, "--config");
    KeyOrigins origins;
    apply_overrides(doc, options, origins);
    config = parse_config(doc, origins);
    validate_kernel_axes(config);
    cases = expand_cases(config);
    if (!options.expect_path.empty()) {  // a bad expectations file stops the run before it starts
      options.expectations = load_expectations(options.expect_path);
      check_run_comparable(options.expectations, config.to_json(), options.expect_path);
    }
    if (!options.dry_run) check_output_writable(options.output_path);
  } catch (const InputError& e) {
    if (printer) std::fprintf(stderr, "p2pbench: error: %s\n", e.what());
    return kExitBadInput;
  }
  if (options.dry_run) return print_dry_run(config, cases);
  return run_benchmark_session(argc, argv, options, config);
}
