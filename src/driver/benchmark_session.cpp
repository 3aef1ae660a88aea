#include "driver/benchmark_session.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "comm/communicator.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "common/version.hpp"
#include "config/axis.hpp"
#include "driver/console.hpp"
#include "driver/link_health.hpp"
#include "engines/nccl_engine.hpp"
#include "measure/clock_sync.hpp"
#include "measure/cpu_binding.hpp"
#include "measure/gpu_device.hpp"
#include "measure/interference_runner.hpp"  // issue 13
#include "driver/trade_table.hpp"  // issue 13
#include "measure/latency_runner.hpp"
#include "measure/pair_runner.hpp"
#include "measure/peer_buffers.hpp"
#include "measure/shared_gate.hpp"
#include "results/result_writer.hpp"
#include "results/summary.hpp"
#include "sweep/sweep.hpp"


namespace p2pbench {

namespace {

using json = nlohmann::json;

// A set-up step every rank runs; any rank's failure ends the session on all ranks with one
// message per failing rank (printed by rank 0) and a common exit status.
class SetupSteps {
 public:
  explicit SetupSteps(const Communicator& comm) : comm_(comm) {}

  // Returns the exit status to leave with, or 0 to go on.
  int run(const char* what, const std::function<void()>& local) {
    json mine = {{"error", ""}, {"bad_input", false}};
    try {
      local();
    } catch (const InputError& e) {
      mine = {{"error", e.what()}, {"bad_input", true}};
    } catch (const std::exception& e) {
      mine = {{"error", std::string(what) + ": " + e.what()}, {"bad_input", false}};
    }
    int status = kExitOk;
    std::set<std::string> printed;
    const auto all = comm_.allgather(mine.dump(), what);
    for (size_t r = 0; r < all.size(); ++r) {
      const json result = json::parse(all[r]);
      const std::string error = result["error"];
      if (error.empty()) continue;
      status = std::max(status, result["bad_input"].get<bool>() ? int(kExitBadInput) : int(kExitFailure));
      if (comm_.rank() == 0 && printed.insert(error).second)
        std::fprintf(stderr, "p2pbench: error (rank %zu): %s\n", r, error.c_str());
    }
    return status;
  }

 private:
  const Communicator& comm_;
};

// P2P attributes of the pair, from a process that sees both GPUs, else marked unknown.
json p2p_attributes(int device, const std::string& peer_bus_id, bool same_device) {
  if (same_device) return {{"known", false}, {"reason", "both ranks use one GPU (--allow-same-device)"}};
  int peer = -1;
  if (cudaDeviceGetByPCIBusId(&peer, peer_bus_id.c_str()) != cudaSuccess || peer == device) {
    cudaGetLastError();
    return {{"known", false}, {"reason", "this process cannot see the peer GPU (e.g. CUDA_VISIBLE_DEVICES per rank)"}};
  }
  auto attr = [&](cudaDeviceP2PAttr a, const char* name) {
    int v = 0;
    cuda_check(cudaDeviceGetP2PAttribute(&v, a, device, peer), std::string("reading the P2P attribute ") + name);
    return v;
  };
  return {{"known", true},
          {"access_supported", attr(cudaDevP2PAttrAccessSupported, "access supported") != 0},
          {"native_atomics_supported", attr(cudaDevP2PAttrNativeAtomicSupported, "native atomics") != 0},
          {"performance_rank", attr(cudaDevP2PAttrPerformanceRank, "performance rank")},
          {"source", "cudaDeviceGetP2PAttribute in rank 0"}};
}

}  // namespace

int run_benchmark_session(int argc, char** argv, const CliOptions& options, const Config& parsed_config) {
  Communicator comm(&argc, &argv);
  SetupSteps setup(comm);
  const int me = comm.rank();
  if (comm.size() != 2) {
    if (me == 0)
      std::fprintf(stderr, "p2pbench: error: needs exactly 2 ranks, one per GPU (mpirun -np 2 ...); got %d\n", comm.size());
    return kExitBadInput;
  }

  // Rank 0's reading of the config is the one every rank runs.
  std::string config_text = parsed_config.to_json().dump();
  comm.broadcast(config_text, 0, "broadcasting the config");
  const Config config = parse_config(json::parse(config_text));
  const std::vector<CaseSpec> cases = expand_cases(config);

  int device = -1;
  GpuInfo gpu;
  json cpu_binding;
  if (int rc = setup.run("selecting the GPU", [&] {
        const auto specs = split_list(options.devices);
        device = select_device(specs[size_t(me) % specs.size()], comm.local_rank());
        cuda_check(cudaSetDevice(device), "selecting GPU " + std::to_string(device));
        gpu = describe_device(device);
        cpu_binding = bind_near_gpu(gpu.pci_bus_id, !options.no_cpu_binding);
      }))
    return rc;

  // Identities travel as bytes, so "same GPU" holds when each rank sees only its own GPU.
  std::vector<json> gpus;
  for (const auto& blob : comm.allgather(gpu.to_json(me).dump(), "exchanging GPU identities")) gpus.push_back(json::parse(blob));
  const bool same_device = gpus[0]["uuid"] == gpus[1]["uuid"];
  json p2p;
  if (int rc = setup.run("checking the GPU pair", [&] {
        if (same_device && !options.allow_same_device)
          throw InputError("--devices", gpus[0]["uuid"].get<std::string>(),
                           "both ranks are on the same GPU; give each rank its own GPU (--devices, CUDA_VISIBLE_DEVICES) "
                           "or pass --allow-same-device for functional testing");
        if (me == 0) p2p = p2p_attributes(device, gpus[1]["pci_bus_id"], same_device);
      }))
    return rc;
  std::string p2p_text = p2p.dump();
  comm.broadcast(p2p_text, 0, "sharing the P2P attributes");
  p2p = json::parse(p2p_text);

  // Without peer access the P2P and latency methods are skipped while the host link and the
  // baselines still run; a sweep of nothing but P2P methods is refused.
  std::optional<std::string> no_peer;
  if (options.no_p2p) no_peer = "peer access turned off (--no-p2p)";
  else if (p2p["known"] == true && p2p["access_supported"] == false)
    no_peer = "peer access between these GPUs is not possible (cudaDevP2PAttrAccessSupported = 0)";
  if (int rc = setup.run("checking what can run without peer access", [&] {
        if (!no_peer || !std::all_of(cases.begin(), cases.end(), [](const CaseSpec& c) { return needs_peer_mapping(c.method); }))
          return;
        throw InputError("methods", config.to_json()["methods"].dump(),
                         *no_peer + ", and every method of this sweep needs it; the baselines (staged, nccl) and the "
                                    "host link (h2d, d2h) run without it");
      }))
    return rc;
  if (no_peer && me == 0) std::fprintf(stderr, "p2pbench: warning: %s: P2P and latency methods are skipped\n", no_peer->c_str());
  // NCCL would still use P2P where the hardware has it: tell it not to, unless the user chose.
  if (options.no_p2p) setenv("NCCL_P2P_DISABLE", "1", 0);

  // Memory: each rank holds a source and a destination buffer of the largest footprint.
  // At least 4 MiB: the latency methods' inboxes and pointer chain live in these buffers.
  uint64_t capacity = 4u << 20;
  for (const CaseSpec& c : cases) capacity = std::max(capacity, BufferLayout::for_case(c.bytes, config.buffer_pool_bytes).footprint());
  if (int rc = setup.run("checking device memory", [&] {
        size_t free_bytes = 0, total = 0;
        cuda_check(cudaMemGetInfo(&free_bytes, &total), "reading free device memory");
        const uint64_t needed = 2 * capacity * (same_device ? 2 : 1) + (256ull << 20);
        if (needed > free_bytes)
          throw InputError("sizes", format_size(*std::max_element(config.sizes.begin(), config.sizes.end())),
                           "needs " + format_size(needed) + " of device memory per GPU (source + destination" +
                               std::string(config.buffer_pool_bytes ? " pools" : "") + "), but only " + format_size(free_bytes) +
                               " is free");
      }))
    return rc;

  // The start gate: rank 0 creates it, rank 1 opens it, then the name is removed at once.
  std::optional<SharedGate> gate;
  std::string gate_name;
  if (int rc = setup.run("creating the start gate", [&] {
        if (me == 0) gate.emplace(SharedGate::create());
        if (me == 0) gate_name = gate->name();
      }))
    return rc;
  comm.broadcast(gate_name, 0, "sharing the start gate's name");
  if (int rc = setup.run("opening the start gate", [&] {
        if (me != 0) gate.emplace(SharedGate::open(gate_name));
      }))
    return rc;
  if (int rc = setup.run("registering the start gate", [&] {
        if (me == 0) gate->unlink();
        gate->register_with_device();
      }))
    return rc;

  std::optional<PeerBuffers> buffers;
  ClockOffset clock_start, clock_end;
  const uint64_t sweep_start_ns = host_clock_ns();
  if (int rc = setup.run("mapping the peer's buffers", [&] {
        buffers.emplace(comm, capacity, no_peer);
        clock_start = calibrate_gpu_clock();
        gpu.observed_sm_clock_mhz = measure_sm_clock_mhz();
      }))
    return rc;

  // The link: topology, peak and health before the sweep (rank 0 asks NVML about both GPUs).
  std::optional<LinkHealth> link;
  if (me == 0) link.emplace(gpus);
  const std::optional<double> peak = link ? link->peak_gbps_per_direction() : std::nullopt;

  // The sweep. Baseline methods get their session resources (NCCL communicator, staging area)
  // only while their cases run.
  std::unique_ptr<BaselineResources> baselines = make_baseline_resources(capacity, device);
  const RunnerOptions runner_options = RunnerOptions::from(config, options.timeout_scale);
  PairRunner runner(comm, runner_options, device, *gate, *buffers, baselines.get());
  LatencyRunner latency_runner(comm, runner_options, *gate, *buffers, gpu.max_sm_clock_mhz);
  InterferenceRunner interference(comm, runner_options, config.interference, device, *gate, *buffers);  // issue 13
  bool baseline_open = false;  // the baseline method of the previous case has begun
  Method open_baseline = Method::kCe;
  ProgressLine progress(cases.size(), options.progress);
  std::vector<json> rows, group_rows;
  std::string group, incomplete_reason;
  bool any_failed = false;
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseSpec& c = cases[i];
    if (me == 0 && group_key(c) != group) {
      print_group_table(stdout, group, group_rows);
      group_rows.clear();
      group = group_key(c);
    }
    if (baseline_open && open_baseline != c.method) {
      baselines->end(open_baseline, comm);
      baseline_open = false;
    }
    if (is_two_sided_baseline(c.method) && !baseline_open) {
      baselines->begin(c.method, comm);  // an unavailable method's engines report why
      open_baseline = c.method;
      baseline_open = true;
    }
    const CaseOutcome outcome = is_interference(c.method) ? interference.run(c, i)  // issue 13
                                : is_latency(c.method)     ? latency_runner.run(c, i)
                                                           : runner.run(c, i);
    const json row = result_row(c, outcome, peak);
    any_failed = any_failed || outcome.status == CaseStatus::kFailed;
    if (me == 0) {
      rows.push_back(row);
      group_rows.push_back(row);
      progress.update(i + 1, c.name(), headline_figure(row));
    }
    if (outcome.fatal) {
      incomplete_reason = "stopped after a fatal error in " + c.name() + ": " + outcome.error;
      break;
    }
  }
  if (baseline_open && incomplete_reason.empty()) baselines->end(open_baseline, comm);
  if (me == 0) {
    progress.finish();
    print_group_table(stdout, group, group_rows);
  }

  // The timers again: their offset at the end shows how far they drifted during the sweep.
  const double sweep_seconds = double(host_clock_ns() - sweep_start_ns) * 1e-9;
  if (incomplete_reason.empty()) {
    try {
      clock_end = calibrate_gpu_clock();
    } catch (const std::exception&) {
    }
  }

  // Meta: every rank's view, gathered to rank 0.
  json rank_meta = {{"rank", me}, {"host", comm.host()}, {"pid", int(getpid())}, {"device_index", device},
                    {"cpu_binding", cpu_binding}, {"gpu", gpu.to_json(me)},
                    {"clock_start", clock_start.to_json()}, {"clock_end", clock_end.to_json()}};
  std::vector<json> ranks;
  for (const auto& blob : comm.allgather(rank_meta.dump(), "gathering rank descriptions")) ranks.push_back(json::parse(blob));

  int exit_status = any_failed || !incomplete_reason.empty() ? kExitFailure : kExitOk;
  if (me == 0) {
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    std::vector<std::string> argv_list(argv, argv + argc);
    std::set<std::string> hosts;
    json gpu_list = json::array(), rank_list = json::array();
    for (const json& r : ranks) {
      hosts.insert(r["host"].get<std::string>());
      gpu_list.push_back(r["gpu"]);
      rank_list.push_back({{"rank", r["rank"]}, {"host", r["host"]}, {"pid", r["pid"]}, {"device_index", r["device_index"]},
                           {"cpu_binding", r["cpu_binding"]}});
    }
    auto offset = [&](int r, const char* when) { return ranks[size_t(r)][when]["gpu_minus_host_ns"].get<double>(); };
    const double gpu_offset_start = offset(1, "clock_start") - offset(0, "clock_start");
    const bool end_calibrated = ranks[0]["clock_end"]["rounds"] > 0 && ranks[1]["clock_end"]["rounds"] > 0;
    const double gpu_offset_end = end_calibrated ? offset(1, "clock_end") - offset(0, "clock_end") : 0.0;
    json meta = {
        {"tool", {{"name", "p2pbench"}, {"version", tool_version()}, {"git_sha", tool_git_sha()}}},
        {"timestamp_utc", utc_timestamp()},
        {"command_line", argv_list},
        {"label", config.label},
        {"config", config.to_json()},
        {"units", {{"bandwidth", "GB/s, 1 GB = 1e9 bytes"}, {"time", "microseconds"}, {"size", "bytes"}}},
        {"hosts", std::vector<std::string>(hosts.begin(), hosts.end())},
        {"ranks", rank_list},
        {"gpus", gpu_list},
        {"cuda_driver_version", driver},
        {"cuda_runtime_version", runtime},
        {"p2p", p2p},
        {"peer_access", buffers->no_peer_reason() ? json{{"available", false}, {"reason", *buffers->no_peer_reason()}}
                                                  : json{{"available", true}}},
        {"nccl_version", nccl_in_build() ? json(nccl_version()) : json()},
        {"same_device", same_device},
        {"verify", config.verify},
        {"timer_calibration",
         {{"method", "host CLOCK_REALTIME store polled by a GPU kernel; minimum of (gpu - host) over rounds"},
          {"use", "bidir windows start at the gate release on each GPU and are measured on that GPU's own timer; "
                  "the offsets below are a check, not an input"},
          {"at_start", {ranks[0]["clock_start"], ranks[1]["clock_start"]}},
          {"at_end", {ranks[0]["clock_end"], ranks[1]["clock_end"]}},
          {"gpu1_minus_gpu0_ns_at_start", gpu_offset_start},
          {"gpu1_minus_gpu0_ns_at_end", end_calibrated ? json(gpu_offset_end) : json()},
          {"sweep_seconds", sweep_seconds},
          {"relative_drift_ppm", end_calibrated && sweep_seconds > 0
                                     ? json((gpu_offset_end - gpu_offset_start) / (sweep_seconds * 1e3))
                                     : json()}}},
    };
    link->finish(meta);
    // The driver's own version string, where NVML answered (the CUDA number is in meta).
    if (meta["health_before"].contains("driver_version"))
      for (json& g : meta["gpus"]) g["driver_version"] = meta["health_before"]["driver_version"];
    const json summary = summarize_rows(rows);
    if (!summary.empty()) {
      std::printf("\nSummary (best configuration; knee = fewest SMs reaching 90%% of the best):\n");
      for (const auto& line : summary_lines(summary)) std::printf("  %s\n", line.c_str());
    }
    print_trade_table(stdout, rows);  // issue 13: interference rows only
    const json comparison = compare_methods(rows);
    if (!comparison.empty()) {
      std::printf("\nBest one-way P2P method per size band (GB/s, 1 GB = 1e9 B; speedup over the baselines):\n");
      for (const auto& line : comparison_lines(comparison)) std::printf("  %s\n", line.c_str());
    }
    try {
      write_json_atomically(options.output_path, result_document(meta, rows, summary, !incomplete_reason.empty(), incomplete_reason, comparison));
      std::printf("\nresults: %s (%zu cases%s)\n", options.output_path.c_str(), rows.size(),
                  incomplete_reason.empty() ? "" : ", INCOMPLETE");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "p2pbench: error: %s\n", e.what());
      exit_status = kExitFailure;
    }
    if (!incomplete_reason.empty()) std::fprintf(stderr, "p2pbench: %s\n", incomplete_reason.c_str());
    if (any_failed) std::fprintf(stderr, "p2pbench: some cases failed; see the 'error' fields\n");
  }
  if (incomplete_reason.empty()) {
    if (int rc = setup.run("freeing the buffers", [&] { buffers->close(comm); })) return rc;
  }
  return int(comm.max(double(exit_status), "agreeing on the exit status"));
}

}  // namespace p2pbench
