// Result documents built through the real writer, for the writer's tests and for the
// schema check (write_example_results feeds them to the JSON Schema validator).
#pragma once

#include <nlohmann/json.hpp>

#include "measure/case_outcome.hpp"
#include "results/result_writer.hpp"
#include "results/summary.hpp"

namespace p2pbench::testing {

// One flow (0 -> 1 unless given) whose figures are the aggregate's.
inline CaseOutcome ok_outcome(double base_gbps, int samples = 10, Flow flow = {0, 1}) {
  CaseOutcome o;
  o.iterations = 4;
  o.verified = true;
  FlowSamples f = FlowSamples::named(flow, 0);
  for (int i = 0; i < samples; ++i) {
    o.gbps.push_back(base_gbps * (1.0 + 0.001 * i));
    o.time_us.push_back(1e3 / o.gbps.back());
    f.gbps.push_back(o.gbps.back());
    f.time_us.push_back(o.time_us.back());
    f.window_ns.push_back(o.time_us.back() * 1e3 * double(o.iterations));
  }
  o.flows = {f};
  return o;
}

// Both directions of the pair at once: each flow at `each_gbps`, the aggregate their sum.
inline CaseOutcome bidir_outcome(double each_gbps, double overlap) {
  CaseOutcome o = ok_outcome(2 * each_gbps);
  o.flows = {ok_outcome(each_gbps).flows[0], ok_outcome(each_gbps * 1.002, 10, {1, 0}).flows[0]};
  o.overlap.assign(o.gbps.size(), overlap);
  return o;
}

inline CaseSpec spec(Method m, Direction d, Mode mode, uint64_t bytes, std::optional<int> blocks = std::nullopt) {
  CaseSpec c;
  c.method = m;
  c.direction = d;
  c.mode = mode;
  c.bytes = bytes;
  if (mode == Mode::kBidir) c.flows = {{0, 1}, {1, 0}};
  if (m == Method::kLdst) {
    c.blocks = blocks.value_or(8);
    c.threads = 512;
    c.unroll = 4;
  }
  if (m == Method::kTma) {
    c.blocks = blocks.value_or(8);
    c.smem_bytes = 131072;
    c.stages = 4;
  }
  return c;
}

// A gemm case on rank 0 alone (m = n = 1024, K = 512: 2 m n k = 1.07e9 FLOP a GEMM) timed at 10, 20
// and 40 us: 107.4, 53.7 and 26.8 TFLOP/s, the median 53.7. Needs the gemm method registered
// (p2pbench_methods linked).
inline CaseResult gemm_case() {
  CaseSpec c = spec(parse_method("gemm").value(), Direction::kPush, Mode::kUni, 4ull << 20);
  c.gemm_k = 512;
  c.flows = {{0, 0}};
  CaseOutcome o = ok_outcome(100, 3, {0, 0});
  o.time_us = {10, 20, 40};
  return {c, o};
}

inline nlohmann::json example_meta() {
  nlohmann::json gpu = {{"rank", 0}, {"device_index", 0}, {"name", "Example GPU"}, {"uuid", "GPU-0"},
                        {"pci_bus_id", "0000:00:06.0"}, {"sm_count", 132}, {"compute_capability", "9.0"}};
  nlohmann::json gpu1 = gpu;
  gpu1["rank"] = 1;
  gpu1["uuid"] = "GPU-1";
  return {{"tool", {{"name", "p2pbench"}, {"version", "0.1.0"}, {"git_sha", "abc"}}},
          {"timestamp_utc", utc_timestamp()},
          {"command_line", {"p2pbench", "--config", "x.json"}},
          {"label", "example"},
          {"config", nlohmann::json::object()},
          {"units", {{"bandwidth", "GB/s, 1 GB = 1e9 bytes"}, {"time", "microseconds"}, {"size", "bytes"}}},
          {"hosts", {"node"}},
          {"ranks", {{{"rank", 0}, {"host", "node"}, {"cpu_binding", {{"policy", "none"}}}},
                     {{"rank", 1}, {"host", "node"}, {"cpu_binding", {{"policy", "none"}}}}}},
          {"gpus", {gpu, gpu1}},
          {"group", {{"ranks", 2}, {"nodes", {{0, 1}}}, {"gpus", {"GPU-0", "GPU-1"}}, {"node_override", nullptr}}},
          {"pairs", {{{"src_rank", 0}, {"dst_rank", 1}, {"same_device", false}, {"same_node", true}, {"link_type", "nvlink"},
                      {"topo_label", "NV18"}, {"nvlink_links", 18}, {"peak_gbps_per_direction", 450.0}},
                     {{"src_rank", 1}, {"dst_rank", 0}, {"same_device", false}, {"same_node", true}, {"link_type", "nvlink"},
                      {"topo_label", "NV18"}, {"nvlink_links", 18}, {"peak_gbps_per_direction", 450.0}}}},
          {"cuda_driver_version", 13000},
          {"cuda_runtime_version", 13000},
          {"p2p", {{"known", false}, {"reason", "example"}}},
          {"same_device", false},
          {"verify", true},
          {"peer_mapping", {{"allocator", "legacy"}, {"mapped", true}, {"map_ms", 41.5}, {"map_ms_by_rank", {41.5, 39.0}},
                            {"unmap_ms", 1.25}, {"unmap_ms_by_rank", {1.25, 1.0}}, {"own_buffers", "cudaMalloc"}}}};
}

// An interference outcome: `overlap` in every sample; a partition of `k` SMs granted
// as `granted` (0: unpartitioned).
inline CaseOutcome interference_outcome(double overlap, int granted) {
  CaseOutcome o = ok_outcome(300, 5);
  InterferenceSamples s;
  s.workload_unit = "TFLOP/s";
  s.workload_description = "gemm bf16 8192x8192x8192 (example)";
  for (int i = 0; i < 5; ++i) {
    s.workload_alone.push_back(700 + i);
    s.workload_together.push_back(600 + i);
    if (granted > 0) s.workload_partition_alone.push_back(650 + i);
    s.transfer_alone_gbps.push_back(330 + i);
    s.transfer_together_gbps.push_back(o.gbps[size_t(i)]);
    s.overlap.push_back(overlap);
    s.workload_launches_together.push_back(60);
  }
  if (granted > 0) {
    s.transfer_group_sms = granted;
    s.workload_group_sms = 132 - granted;
  }
  o.interference = s;
  return o;
}

inline CaseSpec interference_spec(Method engine, const char* workload, int k) {
  CaseSpec c = spec(engine, Direction::kPush, Mode::kUni, 1 << 30);
  c.method = Method::kInterference;
  c.engine = engine;
  c.workload = workload;
  c.sm_partition = k;
  c.both_gpus_busy = false;
  c.transfer_high_priority = false;
  return c;
}

// A document with ok uni and bidir rows, a failed row, a skipped row, interference rows and a summary.
inline nlohmann::json example_document() {
  std::vector<CaseResult> cases;
  cases.push_back({spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 30), ok_outcome(390)});
  const CaseOutcome bidir = bidir_outcome(390, 0.99);
  cases.push_back({spec(Method::kCe, Direction::kPush, Mode::kBidir, 1 << 30), bidir});
  for (int blocks : {1, 4, 8, 32}) {
    CaseOutcome o = ok_outcome(std::min(372.0, 46.0 * blocks));
    o.sms_used = blocks;
    cases.push_back({spec(Method::kLdst, Direction::kPush, Mode::kUni, 1 << 30, blocks), o});
  }
  CaseOutcome failed;
  failed.status = CaseStatus::kFailed;
  failed.error = "verification failed on rank 1 (sample 0, slot 0): 3 of 4096 bytes differ; first bad offset 17";
  cases.push_back({spec(Method::kTma, Direction::kPull, Mode::kUni, 4096), failed});
  CaseOutcome skipped;
  skipped.status = CaseStatus::kSkipped;
  skipped.error = "TMA bulk copies need compute capability 9.0+ (this GPU is 8.0)";
  cases.push_back({spec(Method::kTma, Direction::kPush, Mode::kUni, 4096), skipped});
  cases.push_back({interference_spec(Method::kCe, "gemm", 0), interference_outcome(0.99, 0)});
  cases.push_back({interference_spec(Method::kLdst, "gemm", 4), interference_outcome(0.90, 8)});
  CaseOutcome no_green;
  no_green.status = CaseStatus::kSkipped;
  no_green.error = "green contexts unavailable: the driver has no cuGreenCtxCreate (CUDA 12.4 or newer needed)";
  cases.push_back({interference_spec(Method::kTma, "hbm", 16), no_green});
  CaseOutcome chase;  // latency_read: wall time, cycles and the peak-clock figure
  chase.iterations = 20000;
  chase.verified = true;
  chase.latency_us = {0.852, 0.853, 0.851};
  chase.cycles = {1640, 1642, 1639};
  for (double c : chase.cycles) chase.latency_at_peak_clock_us.push_back(c / 1980.0);
  CaseSpec read = spec(Method::kLatencyRead, Direction::kPull, Mode::kUni, 2 << 20);
  read.flows = {{0, 1}};
  read.protocol = "plain";
  // The variant (here nvbandwidth's launch) and its side figures: latency_read's "read_chase".
  ReadChase variant;
  variant.load = "plain";
  variant.launch = "every_sm";
  read.read_chase = variant;
  ReadChaseSamples figures;
  figures.kernel_timer_us = chase.latency_us;
  figures.events_us = {0.854, 0.855, 0.853};
  figures.warmup_kernel_timer_us = 0.86;
  figures.warmup_events_us = 0.87;
  figures.grid_blocks = 2;
  figures.reader_sm_clock_mhz = 1980.0;
  figures.sm_ids = {0, 2};
  figures.per_sm_ns_per_load = {853.0, 851.0};
  figures.per_sm_launches = {3, 3};
  chase.read_chase = figures;
  cases.push_back({read, chase});
  std::vector<nlohmann::json> rows;
  for (const CaseResult& r : cases) rows.push_back(result_row(r.spec, r.outcome));
  return result_document(example_meta(), rows, summarize_cases(cases, GroupFacts::of(GroupLayout::distinct(2))), false, "");
}

}  // namespace p2pbench::testing
