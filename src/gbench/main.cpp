// p2pbench-gbench: the sweep of a p2pbench config as Google Benchmarks, one process driving two
// GPUs. Order matters: Google Benchmark takes its --benchmark_* flags out of argv first; ours
// are parsed strictly from what is left; cases are registered without touching CUDA; the GPUs
// are opened only when Google Benchmark is about to run (never for --benchmark_list_tests).
#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "common/device_connections.hpp"
#include "common/errors.hpp"
#include "driver/cli_options.hpp"
#include "gbench/case_registration.hpp"
#include "gbench/gbench_options.hpp"
#include "gbench/run_context.hpp"
#include "gbench/session_reporter.hpp"
#include "gbench/two_gpu_session.hpp"
#include "measure/runner_options.hpp"

namespace {

using namespace p2pbench;
using namespace p2pbench::gbench;

constexpr const char* kProgram = "p2pbench-gbench";

void print_error(const std::string& message) { std::fprintf(stderr, "%s: error: %s\n", kProgram, message.c_str()); }

// Runs the registered cases; the GPUs are opened as Google Benchmark starts. Returns the exit
// status: set-up's error, a filter that matched nothing, or failed cases.
int run_registered(TwoGpuSession& session, const Config& config) {
  int setup_status = kExitOk;
  std::string setup_error;
  SessionReporter reporter([&] {
    try {
      session.open();
      for (const auto& [key, value] : describe_run(session, config)) benchmark::AddCustomContext(key, value);
      return true;
    } catch (const InputError& e) {
      setup_status = kExitBadInput;
      setup_error = e.what();
    } catch (const std::exception& e) {
      setup_status = kExitFailure;
      setup_error = e.what();
    }
    return false;
  });
  const size_t matched = benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  if (setup_status != kExitOk) {
    print_error(setup_error);
    return setup_status;
  }
  if (matched == 0) return kExitBadInput;  // Google Benchmark said which filter matched nothing
  if (!session.failures().empty()) {
    for (const std::string& f : session.failures()) print_error(f);
    print_error(std::to_string(session.failures().size()) + " case(s) failed");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  p2pbench::request_device_connections();
  // Takes --benchmark_* (and --help, which prints our flags too) and leaves everything else.
  benchmark::Initialize(&argc, argv, print_gbench_help);

  GbenchOptions options;
  CLI::App app(kProgram, kProgram);
  add_gbench_options(app, options);
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    return cli_failure_message(*failed, e, google_benchmark_flags());
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    print_gbench_help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }

  Config config;
  CaseSelection selection;
  try {
    config = load_config(options);
    selection = select_cases(config);
  } catch (const InputError& e) {
    print_error(e.what());
    return kExitBadInput;
  }
  for (const std::string& line : selection.left_out)
    std::fprintf(stderr, "%s: note: not registered: %s\n", kProgram, line.c_str());
  if (selection.cases.empty()) {
    print_error("the config has no case that p2pbench-gbench can run");
    return kExitBadInput;
  }

  TwoGpuSession session({options.src, options.dst, options.driver.allow_same_device,
                         RunnerOptions::from(config, options.driver.timeout_scale)});
  register_cases(selection.cases, session);

  return run_registered(session, config);
}
