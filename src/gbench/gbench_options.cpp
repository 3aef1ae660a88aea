#include "gbench/gbench_options.hpp"

#include <CLI/CLI.hpp>

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <regex>
#include <set>

#include "common/errors.hpp"
#include "plan/sweep.hpp"

namespace p2pbench::gbench {

namespace {

// Driver flags with no meaning here: results go through --benchmark_out, cases are listed by
// --benchmark_list_tests, GPUs are chosen by --src/--dst, one process binds no CPUs, and Google
// Benchmark decides how many samples a case takes (--benchmark_min_time); expected values are
// checked by `p2pbench-report check` on the driver's results. One process maps no peer's
// buffers, so there is no allocator to choose (the config key is read and not used).
constexpr const char* kDriverOnly[] = {"--output", "--dry-run", "--topology", "--progress",
                                       "--devices", "--no-cpu-binding", "--samples", "--expect",
                                       "--allocator"};

std::string footer() {
  std::string f =
      "\nExamples:\n"
      "  p2pbench-gbench --config configs/default.json\n"
      "  p2pbench-gbench --config configs/tma-smem.json --benchmark_filter='tma/push/bytes:1073741824/'\n"
      "  p2pbench-gbench --methods ce,ldst --sizes 64M..1G --blocks 32 --src 2 --dst 3\n"
      "  p2pbench-gbench --config configs/default.json --benchmark_list_tests   # names only, no GPU needed\n"
      "  p2pbench-gbench --config configs/ce-large.json --benchmark_repetitions=5 \\\n"
      "      --benchmark_format=json --benchmark_out=after.json\n"
      "\nOne process drives both GPUs (peer access enabled both ways). Benchmark names:\n"
      "  method/direction[/bidir]/bytes:N[/blocks:B/threads:T/unroll:U | /blocks:B/smem:S/stages:K]/manual_time\n"
      "Uni cases move --src -> --dst; bidir cases move both ways at once. Push: the source GPU writes\n"
      "the peer's memory; pull: the destination GPU reads it. One Google Benchmark iteration is one\n"
      "transfer (bidir: one each way at once); iterations run in gated samples of N transfers (counter\n"
      "iterations_per_sample), each timed as a whole with CUDA events (bidir: the union of both GPUs'\n"
      "windows) and verified byte for byte afterwards, outside the timed region. Time is per transfer.\n"
      "Counters GB/s and GB/s_per_SM are decimal (1e9 B/s); Google Benchmark's own bytes_per_second\n"
      "is printed 1024-based on the console. The config key `samples` is not used: Google Benchmark\n"
      "runs samples until --benchmark_min_time of measured time has passed.\n"
      "Axes (--sizes, --blocks, ...) take a list \"1,2,4\", a power-of-two range \"1..132\" or a range\n"
      "with a factor \"4K..1G:4\". Sizes take K/KiB, M/MiB, G/GiB (binary multiples).\n"
      "\nConfig file keys (flags override them):\n";
  for (const auto& [key, help] : config_key_help())
    f += "  " + key + std::string(20 - std::min<size_t>(19, key.size()), ' ') + help + "\n";
  f += "\nExit status: 0 every case ran (or was skipped as unsupported on these GPUs); 1 a case failed\n"
       "(verification, CUDA error) or the GPUs could not be set up (none visible, one only, no peer\n"
       "access); 2 bad input (config, flags, --src/--dst).\n";
  return f;
}

}  // namespace

void add_gbench_options(CLI::App& app, GbenchOptions& o) {
  add_cli_options(app, o.driver);
  for (const char* name : kDriverOnly)
    if (CLI::Option* opt = app.get_option_no_throw(name)) app.remove_option(opt);
  app.description(
      "p2pbench-gbench: GPU-to-GPU bandwidth on Google Benchmark, one process driving two GPUs,\n"
      "with the transfer engines, start gate, timing and verification of the p2pbench MPI driver.");
  app.footer(footer());
  if (CLI::Option* opt = app.get_option_no_throw("--allow-same-device"))
    opt->description("let --src and --dst name one GPU (functional testing; not a P2P figure)");
  if (CLI::Option* opt = app.get_option_no_throw("--label"))
    opt->description("name of this system/run in the custom context (overrides 'label')");
  app.add_option("--src", o.src, "GPU that sends (uni cases): index, UUID or PCI bus id")->capture_default_str();
  app.add_option("--dst", o.dst, "GPU that receives (uni cases): index, UUID or PCI bus id")->capture_default_str();
}

void print_gbench_help() {
  GbenchOptions options;
  CLI::App app("p2pbench-gbench", "p2pbench-gbench");
  add_gbench_options(app, options);
  std::cout << app.help() << "\nGoogle Benchmark flags (--benchmark_*=VALUE, '=' required):\n" << std::flush;
  benchmark::PrintDefaultHelp();
  std::fflush(stdout);
}

std::vector<std::string> google_benchmark_flags() {
  // Its help goes to stdout through printf; a file (no pipe to fill) stands in for it meanwhile.
  std::FILE* capture = std::tmpfile();
  if (!capture) return {};
  std::fflush(stdout);
  const int saved = dup(STDOUT_FILENO);
  if (saved >= 0 && dup2(fileno(capture), STDOUT_FILENO) >= 0) {
    benchmark::PrintDefaultHelp();
    std::fflush(stdout);
    dup2(saved, STDOUT_FILENO);
  }
  if (saved >= 0) close(saved);
  std::string text;
  std::rewind(capture);
  for (int c = std::fgetc(capture); c != EOF; c = std::fgetc(capture)) text += char(c);
  std::fclose(capture);
  std::set<std::string> flags;
  const std::regex flag("--benchmark_[a-z_]+");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it)
    flags.insert(it->str());
  return {flags.begin(), flags.end()};
}

Config load_config(const GbenchOptions& o) {
  nlohmann::json doc = o.driver.config_path.empty() ? nlohmann::json::object()
                                                     : read_json_file(o.driver.config_path, "--config");
  KeyOrigins origins;
  apply_overrides(doc, o.driver, origins);
  Config config = parse_config(doc, origins);
  validate_kernel_axes(config);
  return config;
}

}  // namespace p2pbench::gbench
