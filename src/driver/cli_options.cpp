#include "driver/cli_options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>

#include "common/errors.hpp"
#include "common/version.hpp"
#include "config/axis.hpp"
#include "config/config_keys.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

json list_flag(const std::string& text) { return json(split_list(text)); }

// " (--sampels: did you mean --samples?)" for each unexpected argument that looks like a flag
// close to one of the app's or of `value_flags`, " (--benchmark_filter: only as
// --benchmark_filter=VALUE)" for one of `value_flags` itself, "" where neither is.
std::string unknown_flag_hints(const CLI::App& app, const std::vector<std::string>& value_flags) {
  std::vector<std::string> flags = value_flags;
  for (const CLI::Option* o : app.get_options())
    for (const std::string& name : o->get_lnames()) flags.push_back("--" + name);
  std::string hints;
  for (const std::string& extra : app.remaining()) {
    if (extra.rfind("--", 0) != 0) continue;
    const std::string flag = extra.substr(0, extra.find('='));
    if (std::find(value_flags.begin(), value_flags.end(), flag) != value_flags.end()) {
      hints += " (" + flag + ": only as " + flag + "=VALUE)";
      continue;
    }
    std::string meant;
    for (const std::string& f : closest_names(flag, flags)) meant += (meant.empty() ? "" : " or ") + f;
    if (!meant.empty()) hints += " (" + flag + ": did you mean " + meant + "?)";
  }
  return hints;
}

json number_flag(const std::string& text, const std::string& flag, bool integer) {
  try {
    size_t used = 0;
    if (integer) {
      const long long v = std::stoll(text, &used);
      if (used == text.size()) return v;
    } else {
      const double v = std::stod(text, &used);
      if (used == text.size()) return v;
    }
  } catch (const std::exception&) {
  }
  throw InputError(flag, "\"" + text + "\"", integer ? "not an integer" : "not a number");
}

std::string footer() {
  std::string f =
      "\nExamples:\n"
      "  mpirun -np 2 p2pbench --config configs/default.json --output results.json --label my-node\n"
      "  mpirun -np 2 p2pbench --config configs/ce-large.json -b 64M -e 1G -f 2 --samples 20\n"
      "  mpirun -np 2 p2pbench --config configs/sm-scaling.json --methods ldst --blocks 1..32\n"
      "  p2pbench --config configs/default.json --dry-run      # list the cases, no MPI, no GPU\n"
      "  p2pbench --methods ldst --sizes 1M --blocks 1..132 --dry-run   # flags alone: default.json's other keys\n"
      "  p2pbench --config configs/matrix.json --dry-run --ranks 8     # the plan and its time for 8 GPUs\n"
      "  mpirun -np 8 p2pbench --config configs/patterns.json --patterns ring,all_to_all\n"
      "\nAxes (--sizes, --blocks, --threads, --unroll, --smem, --stages, --chunk-bytes, --chunks-in-flight,\n--routing-skew) take a list \"1,2,4\", "
      "a power-of-two range \"1..132\" (1,2,4,..,128,132: the end is always included) or a range\n"
      "with a factor \"4K..1G:4\". Sizes are bytes, or take K/KiB, M/MiB, G/GiB, T/TiB in any case\n"
      "(64k, 1g, 4KiB: binary multiples). GB/s in the output means 1e9 bytes/s.\n"
      "Push: the source GPU writes the peer's memory. Pull: the destination GPU reads it.\n"
      "Bidir: both ranks transfer at once; its GB/s is all bytes over the union of both windows.\n"
      "Patterns (N ranks): a case is a set of flows released together; matrix = every ordered pair\n"
      "(one at a time, or --schedule rounds: disjoint pairs at once, then a sample re-measured alone).\n"
      "\nConfig file keys (flags override them):\n";
  for (const auto& [key, help] : config_key_help()) f += "  " + key + std::string(20 - std::min<size_t>(19, key.size()), ' ') + help + "\n";
  f += "\nExit status: 0 all cases ok; 1 a case failed (e.g. verification), the run ended early, or --expect\n"
       "found a FAIL (or could not tell the pair's link);\n"
       "2 bad input (the message names the key and value; no result file is written).\n";
  return f;
}

}  // namespace

namespace {

// An SM copy kernel that may run as a load (ldst, tma) has a blocks flag of its own: sweeps that
// compare them set each one's blocks apart.
bool has_blocks_flag(const MethodInfo& m) {
  return m.kind == MethodKind::kCopy && m.runs_as_load && swept_axis(m.id, ShapeAxis::kBlocks);
}

// What the run is, where it writes and which GPUs it takes.
void add_run_options(CLI::App& app, CliOptions& o) {
  app.description(
      "p2pbench: GPU-to-GPU bandwidth between MPI ranks (2 or more, one GPU each) over NVLink or PCIe,\n"
      "through the copy engine (ce), SM load/store kernels (ldst) and Hopper TMA bulk copies (tma).\n"
      "Every transfer is verified byte for byte. Results go to one JSON file (schema_version 2), rewritten after\n"
      "every case (\"incomplete\": true until the last case) so a run stopped early keeps what it measured.");
  app.footer(footer());
  app.set_version_flag("--version", version_text(app.get_name()));
  app.add_option("--config", o.config_path,
                 "JSON config file (see configs/); without it, configs/default.json as built in, flags override its keys")
      ->check(CLI::ExistingFile);
  app.add_option("--output,-o", o.output_path, "results JSON file: rewritten (atomically) after every case, complete at the end")->capture_default_str();
  app.add_flag("--force", o.force,
               "replace an existing --output file that holds complete results or is not a p2pbench file (by default only "
               "an unfinished run's checkpoint is replaced)");
  app.add_option("--label", o.label, "name of this system/run in the results (overrides 'label')");
  app.add_flag("--dry-run", o.dry_run,
               "validate the config, flags and --output and list the cases with an estimate of their time; no MPI, no GPU");
  app.add_flag("--topology", o.topology,
               "print the GPU pair matrix, link peaks and link health through NVML, then exit (no MPI; needs the NVIDIA "
               "driver)")
      ->excludes(app.get_option("--dry-run"));
  auto* list = app.add_flag("--list-methods", o.list_methods,
                            "print every method: its kind, figure, kernel-shape axes and what it measures; then exit");
  app.add_flag("--json", o.json, "with --list-methods: as JSON (the committed schema/methods.json)")->needs(list);
  app.add_flag("--progress", o.progress, "print a progress line on stderr even when it is not a terminal");
  app.add_option("--devices", o.devices,
                 "GPU of each rank, comma-separated: index, UUID or PCI bus id (default: node-local rank); rank r takes "
                 "entry r mod their number (with --dry-run: ranks that share an entry share a GPU in the plan)");
  app.add_flag("--allow-same-device", o.allow_same_device, "let both ranks use one GPU (functional testing; not a P2P figure)");
  app.add_flag("--no-cpu-binding", o.no_cpu_binding, "do not bind each rank to the CPUs near its GPU");
  app.add_flag("--no-p2p", o.no_p2p,
               "run as if the GPUs had no peer access: P2P and latency rows are skipped, the host link and the "
               "baselines (staged, nccl with NCCL_P2P_DISABLE=1) run");
  app.add_option("--allocator", o.allocator,
                 "how the transfer buffers are allocated and mapped by the peers: legacy (cudaMalloc + CUDA IPC, "
                 "default), vmm (cuMemCreate + a file descriptor taken with pidfd_getfd) or fabric (cuMemCreate + a "
                 "fabric handle, needs an IMEX channel); one per run: compare two runs (allocator)");
  app.add_option("--duration", o.duration,
                 "burn-in: repeat the plan's cases for this many seconds, in windows judged one by one (per-window "
                 "bandwidth and slowest transfer, NVML errors, clocks and throttling; burn_in.duration_s)");
  app.add_option("--window", o.window, "burn-in window length in seconds (default 10; burn_in.window_s)");
  app.add_option("--expect", o.expect_path,
                 "expected values (p2pbench-report expect make): print PASS/FAIL per case with the margin at the end "
                 "and exit 1 on any FAIL; checked before the run")
      ->check(CLI::ExistingFile);
  app.add_option("--timeout-scale", o.timeout_scale,
                 "multiply every timeout and deadline between ranks (default 1; 100 in sanitizer mode)")->capture_default_str();
  app.add_flag("--sanitize", o.sanitize,
               "sanitizer mode: no start gate or clock probes, one small sample per case, spinning methods skipped, so "
               "the run works under compute-sanitizer (on automatically there); figures are NOT measurements");
}

// --METHOD-blocks for each SM copy kernel that may run as a load.
void add_method_blocks_options(CLI::App& app, CliOptions& o, const char* group) {
  for (const MethodInfo& m : method_registry())
    if (has_blocks_flag(m))
      app.add_option("--" + std::string(m.name) + "-blocks", o.method_blocks[m.name],
                     "blocks of the " + std::string(m.title) + " (" + m.name + ".blocks)")
          ->group(group);
}

// The sweep's config keys, each with its flag; and the dry run's group of ranks.
void add_sweep_options(CLI::App& app, CliOptions& o) {
  auto* sweep = "Sweep (override config keys)";
  app.add_option("-b,--minbytes", o.min_bytes, "smallest message size (sizes become a range)")->group(sweep);
  app.add_option("-e,--maxbytes", o.max_bytes, "largest message size")->group(sweep);
  app.add_option("-f,--stepfactor", o.step_factor, "size multiplication factor of the range (default 2)")->group(sweep);
  app.add_option("--sizes", o.sizes, "message sizes: list or range (sizes)")->group(sweep);
  app.add_option("--methods", o.methods, "comma-separated: " + method_list([](const MethodInfo& m) {
                   return m.kind != MethodKind::kInterference;  // configured by its own section
                 }) + " (methods; --list-methods says what each measures)")
      ->group(sweep);
  app.add_option("--directions", o.directions, "comma-separated: push,pull (directions)")->group(sweep);
  app.add_option("--modes", o.modes, "comma-separated: uni,bidir (modes)")->group(sweep);
  app.add_option("--patterns", o.patterns,
                 "comma-separated: matrix,sampled,one_to_all,all_to_one,all_to_all,ring,bisection,flows (patterns)")
      ->group(sweep);
  app.add_option("--schedule", o.schedule, "the matrix one pair at a time or in rounds: sequential|rounds (matrix.schedule)")
      ->group(sweep);
  app.add_option("--ranks", o.ranks, "with --dry-run: plan for this many ranks, one GPU each unless --devices says (default 2)")
      ->check(CLI::Range(1, kMaxDryRunRanks));
  app.add_option("--ranks-per-node", o.ranks_per_node,
                 "node override: each K consecutive ranks of a host form a node of their own (cross-node pairs: nccl "
                 "only), to exercise the cross-node path on one host")
      ->check(CLI::Range(1, kMaxDryRunRanks));
  app.add_option("--samples", o.samples, "timed samples per case (samples)")->group(sweep);
  app.add_option("--min-sample-time", o.min_sample_time, "milliseconds per sample at least (min_sample_time_ms)")->group(sweep);
  app.add_option("--warmup-time", o.warmup_time, "milliseconds of warm-up per case (warmup_time_ms)")->group(sweep);
  app.add_option("--buffer-pool", o.buffer_pool, "rotate through this many bytes per buffer (buffer_pool_bytes)")->group(sweep);
  app.add_flag("--no-verify", o.no_verify, "skip verification (recorded in the results)")->group(sweep);
  // An axis flag per shape axis, in the table's order; the flags of one SM kernel's blocks follow
  // --blocks.
  for (ShapeAxis a : kShapeAxes) {
    const ShapeAxisInfo& axis = shape_axis_info(a);
    app.add_option(axis.cli_flag, o.axis_values[a], axis.cli_help)->group(sweep);
    if (a == ShapeAxis::kBlocks) add_method_blocks_options(app, o, sweep);
  }
}

}  // namespace

std::string cli_failure_message(const CLI::App& app, const CLI::Error& e, const std::vector<std::string>& value_flags) {
  const std::string hints = dynamic_cast<const CLI::ExtrasError*>(&e) ? unknown_flag_hints(app, value_flags) : "";
  const std::string program = app.get_name();
  return program + ": error: " + e.what() + hints + "\n(" + program + " --help lists the flags and config keys)\n";
}

void add_cli_options(CLI::App& app, CliOptions& o) {
  add_run_options(app, o);
  add_sweep_options(app, o);
}

void check_flag_combinations(const CliOptions& o) {
  if (o.ranks != 0 && !o.dry_run)
    throw InputError("--ranks", std::to_string(o.ranks),
                     "only with --dry-run (a run's group is the MPI world: mpirun -np " + std::to_string(o.ranks) + ")");
}

void apply_overrides(json& doc, const CliOptions& o, KeyOrigins& origins) {
  if (!doc.is_object()) return;  // parse_config reports it
  auto set = [&](const std::string& key, const json& value, const std::string& flag) {
    doc[key] = value;
    origins[key] = flag;
  };
  auto set_nested = [&](const std::string& section, const std::string& key, const json& value, const std::string& flag) {
    if (!doc.contains(section) || !doc[section].is_object()) doc[section] = json::object();
    doc[section][key] = value;
    origins[section + "." + key] = flag;
  };
  if (!o.label.empty()) set("label", o.label, "--label");
  if (!o.methods.empty()) set("methods", list_flag(o.methods), "--methods");
  if (!o.directions.empty()) set("directions", list_flag(o.directions), "--directions");
  if (!o.modes.empty()) set("modes", list_flag(o.modes), "--modes");
  if (!o.patterns.empty()) set("patterns", list_flag(o.patterns), "--patterns");
  if (!o.schedule.empty()) set_nested("matrix", "schedule", o.schedule, "--schedule");
  if (!o.sizes.empty()) set("sizes", axis_flag_to_json(o.sizes, "--sizes"), "--sizes");
  if (!o.min_bytes.empty() || !o.max_bytes.empty() || !o.step_factor.empty()) {
    // nccl-tests style: -b/-e/-f make the sizes a range; missing ends come from the config.
    std::vector<uint64_t> current;
    if (doc.contains("sizes")) current = parse_axis(doc["sizes"], "sizes", true);
    json range = json::object();
    range["min"] = !o.min_bytes.empty() ? json(o.min_bytes) : current.empty() ? json() : json(current.front());
    range["max"] = !o.max_bytes.empty() ? json(o.max_bytes) : current.empty() ? json() : json(current.back());
    if (range["min"].is_null()) range["min"] = range["max"];
    if (range["max"].is_null()) range["max"] = range["min"];
    if (!o.step_factor.empty()) range["factor"] = number_flag(o.step_factor, "-f", true);
    std::string given;  // the flags actually given, so an error names them
    for (const auto& [flag, value] : {std::pair{"-b", &o.min_bytes}, {"-e", &o.max_bytes}, {"-f", &o.step_factor}})
      if (!value->empty()) given += (given.empty() ? "" : "/") + std::string(flag);
    set("sizes", range, given);
  }
  if (!o.samples.empty()) set("samples", number_flag(o.samples, "--samples", true), "--samples");
  if (!o.min_sample_time.empty())
    set("min_sample_time_ms", number_flag(o.min_sample_time, "--min-sample-time", false), "--min-sample-time");
  if (!o.warmup_time.empty()) set("warmup_time_ms", number_flag(o.warmup_time, "--warmup-time", false), "--warmup-time");
  if (!o.buffer_pool.empty()) set("buffer_pool_bytes", o.buffer_pool == "0" ? json(0) : json(o.buffer_pool), "--buffer-pool");
  if (o.no_verify) set("verify", false, "--no-verify");
  if (!o.allocator.empty()) set("allocator", o.allocator, "--allocator");
  if (!o.duration.empty()) set_nested("burn_in", "duration_s", number_flag(o.duration, "--duration", false), "--duration");
  if (!o.window.empty()) set_nested("burn_in", "window_s", number_flag(o.window, "--window", false), "--window");
  // An axis flag sets that axis in the section of every method that sweeps it (the registry's).
  for (const auto& [axis, value] : o.axis_values)
    if (!value.empty()) {
      const char* flag = shape_axis_info(axis).cli_flag;
      for (const MethodInfo& m : method_registry())
        if (swept_axis(m.id, axis)) set_nested(m.name, to_string(axis), axis_flag_to_json(value, flag), flag);
    }
  for (const auto& [method, blocks] : o.method_blocks)
    if (!blocks.empty()) {
      const std::string flag = "--" + method + "-blocks";
      set_nested(method, "blocks", axis_flag_to_json(blocks, flag.c_str()), flag);
    }
}

}  // namespace p2pbench
