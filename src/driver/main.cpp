// p2pbench: parses flags and the config BEFORE MPI starts, so bad input gets one clear message
// and exit status 2 with no result file; then hands over to the two-rank session.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/errors.hpp"
#include "common/safe_file.hpp"
#include "config/axis.hpp"
#include "driver/benchmark_session.hpp"
#include "driver/cli_options.hpp"
#include "driver/expectations.hpp"
#include "plan/sweep.hpp"

namespace {

using namespace p2pbench;

// Under mpirun every rank validates the same input; only the first rank prints the error.
bool first_rank_by_environment() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var)) return std::atoi(v) == 0;
  }
  return true;
}

// Timeouts become deadlines in nanoseconds: a finite positive factor that keeps them in range.
void check_timeout_scale(double scale) {
  if (!std::isfinite(scale) || scale <= 0 || scale > 1e6) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", scale);
    throw InputError("--timeout-scale", text,
                     "must be a finite number > 0 and at most 1000000 (a 10 s timeout becomes 116 days)");
  }
}

// The config (file, or the built-in default.json), flags applied, every limit that needs no GPU
// checked, and the cases. Throws InputError naming the key or flag.
std::vector<CaseSpec> load_sweep(const CliOptions& options, Config& config) {
  check_timeout_scale(options.timeout_scale);
  nlohmann::json doc = options.config_path.empty() ? default_config_document()
                                                   : read_json_file(options.config_path, "--config");
  KeyOrigins origins;
  apply_overrides(doc, options, origins);
  config = parse_config(doc, origins);
  validate_kernel_axes(config, origins);
  check_case_count(config);  // before expanding
  std::vector<CaseSpec> cases = expand_cases(config);
  device_memory_need(config, cases, origins);  // throws where the buffers overflow 64 bits
  return cases;
}

int print_dry_run(const Config& config, const std::vector<CaseSpec>& cases) {
  const SweepEstimate e = estimate(config, cases);
  std::printf("p2pbench dry run: config '%s' is valid\n", config.label.c_str());
  std::printf("%zu cases (%zu skipped up front), %d samples each, >= %.3g ms per sample%s\n", e.cases, e.skipped,
              config.samples, config.min_sample_time_ms, config.verify ? ", every byte verified" : ", NOT verified");
  std::printf("estimated: %.1f GB moved (1 GB = 1e9 B), about %.0f s at ~380 GB/s\n", e.bytes_moved / 1e9, e.seconds);
  std::printf("checked: the config's keys and kernel shapes, %zu cases <= %llu, buffer sizes within 64 bits\n",
              cases.size(), static_cast<unsigned long long>(kMaxCases));
  std::printf("NOT checked without a GPU (the run checks them):\n");
  for (const std::string& line : checks_needing_a_gpu(config, cases)) std::printf("  - %s\n", line.c_str());
  std::printf("\n");
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
    cases = load_sweep(options, config);
    if (!options.expect_path.empty()) {  // a bad expectations file stops the run before it starts
      options.expectations = load_expectations(options.expect_path);
      check_run_comparable(options.expectations, config.to_json(), options.expect_path);
    }
    if (!options.dry_run) check_output_path(options.output_path, "--output");
  } catch (const InputError& e) {
    if (printer) std::fprintf(stderr, "p2pbench: error: %s\n", e.what());
    return kExitBadInput;
  }
  if (options.dry_run) return print_dry_run(config, cases);
  options.timeout_scale_given = app.count("--timeout-scale") > 0;
  // The session handles every failure of the run itself (it keeps what finished); this is the
  // last net, for one before the session exists (MPI start-up, say).
  try {
    return run_benchmark_session(argc, argv, options, config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "p2pbench: error: %s\n", e.what());
    return kExitFailure;
  }
}
