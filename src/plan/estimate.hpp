// How long a plan takes, for --dry-run: from per-case costs measured on real runs, and, for a
// case of several flows, the busiest GPU (flows out of one GPU share its egress, flows into it
// its ingress).
#pragma once

#include <cstddef>
#include <vector>

#include "config/config.hpp"
#include "plan/case_spec.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

// The measured costs the estimate is made of: calibrate HERE (one place) against a real run.
// Fitted to the committed two-H200 runs in results/h200-nv18/ (meta.timer_calibration.
// sweep_seconds against the rows' cases, samples x iterations x time_us and bytes):
// default.json (144 cases, 1440 samples, 4.77 s), default-same-device.json (234, 2340, 5.29 s),
// bidir-sm.json (50, 250, 2.50 s), ldst-threads.json (96, 480, 6.72 s), sm-scaling.json (180,
// 900, 11.77 s), tma-smem.json (240, 1200, 14.36 s), ce-large.json (30, 600, 3.93 s),
// gbench-check.json (10, 100, 0.80 s), ce-bidir/ce-bidir.json (6, 60, 0.49 s). What the rows'
// timed transfers and warm-ups do not explain (e.g. default.json: 4.77 - 1.45 - 1.51 = 1.81 s)
// was fitted by non-negative least squares, relative to each run's length, to
// per_case_s x cases + per_sample_s x samples + verify_s_per_gb x GB verified:
// per_case_s 5.99 ms, per_sample_s 0 (not separable from the per-case cost in these runs),
// verify_s_per_gb 3.60 ms; the fit is within 7% of every run but ce-large (+17%) and
// ce-bidir (-39%, a 0.5 s run).
struct CaseCostModel {
  double per_case_s = 5.99e-3;        // set-up of a case: skips, calibration, graph capture, lock-step steps
  double per_sample_s = 0.0;          // a sample's gate and steps beyond the transfer
  double verify_s_per_gb = 3.60e-3;   // fill, poison and verify, per GB the busiest GPU receives, per sample
  // One GPU's egress (or ingress) to other GPUs: the slowest engine's uni push at 1 GiB in
  // default.json (ldst 369.4 GB/s; ce 395.8, tma 371.6).
  double link_gbps = 369.4;
  // A copy within one GPU (ranks sharing it): ce push uni at 256 MiB in default-same-device.json.
  double same_gpu_gbps = 2112.8;
  // An SM kernel's flow (ldst, tma) moves at most this much per block: ldst and tma with 1 to 8
  // blocks in sm-scaling.json (ldst 1 block: 45.8 GB/s; tma 8 blocks: 363.3).
  double gbps_per_block = 45.8;
  // A GPU's host link (h2d, d2h): h2d at 1 GiB in host-link.json.
  double host_link_gbps = 55.4;
  // Verification in pinned host memory (h2d/d2h): host-link.json's 4.11 s less its transfers
  // (1.14 s), warm-ups (0.28 s) and 24 cases' set-up leave 2.55 s for 57.3 GB verified.
  double host_verify_s_per_gb = 44.5e-3;
  // A transfer's fixed cost: ce push uni at 64 KiB in default.json took 2.54 us.
  double transfer_floor_s = 2.54e-6;
  // Latency methods, latency.json: latency_signal one way 0.91 us (flag_in_data) and 2.28 us
  // (payload_then_flag), at 4 B: 1.6 us between them; latency_read 0.85 us a load;
  // latency_ce 7.40 us a copy.
  double signal_one_way_s = 1.6e-6;
  double read_load_s = 0.85e-6;
  double ce_copy_latency_s = 7.40e-6;
  double sms_for_every_sm_chase = 132;  // latency_read launch every_sm: one launch per SM (H200)
  // Once per run with nccl cases (communicator set-up): nccl-tests-equivalent.json took 1.39 s,
  // 0.4 s of it its 14 cases by the costs above; baselines.json then comes out within 1%.
  double nccl_setup_s = 1.0;

  // Costs of some method families beyond the terms above, fitted (after the terms above and the
  // load beside a latency case) by non-negative least squares, relative to each run's length,
  // over every complete two-H200 run in results/h200-nv18/ but contention/contended.json (GPUs
  // shared with another job) and remeasure-2026-11-27/runs/latency-0ad2a69.json (the ping-pong
  // regression its COMMANDS.md records): 45 runs. What each case does beyond the terms above:
  // - tokens (CaseSpec::routing_skew): the router's routes, gathers and combine rows, built on
  //   the host and uploaded per case, in proportion to a rank's tokens: tokens-2026-11-27
  //   (168 cases of 4096 tokens: 8.18 s, 3.9 s by the terms above) and tokens-tune-2026-11-27
  //   (108: 5.89 s, 2.5 s) against tokens-128 (168 of 128 tokens);
  double tokens_case_s_per_token = 6.56e-6;
  // - interference beside the GEMM workload (CaseSpec::workload "gemm"): cuBLASLt's algorithm
  //   choice for each SM target and the GEMM's reference check, fitted (relative least squares)
  //   to the four runs since the GEMM's checksum was mended (9414e22), whose sweeps it then gives
  //   within 17 %: all-gather-claims-2026-11-30/call-checksum (28 cases, 84.5 s) and
  //   interference-after-checksum-2026-11-30 (zero-sm 17 cases, 82.2 s; collectives 12, 34.1 s;
  //   collectives-sm 16, 48.2 s). Before the mend each check took seconds: 5.58 s a case;
  //   the HBM-only runs need nothing more;
  double gemm_workload_case_s = 0.52;
  // - a transfer kernel sharing every SM with that GEMM (unpartitioned; a kernel of its own or
  //   NCCL's): each launch gets SMs once a GEMM launch ends, which fills the GPU in one wave, so
  //   a transfer beside it lasts at least one GEMM launch. The GEMM's rate for that launch:
  //   interference-sustained-2026-11-30/call-2d8f518/interference-shared-sms.json (8192^3, its
  //   launches beside ldst, put_signal_ldst and nccl of 64 MiB: 1.62-1.68 ms, about 680
  //   TFLOP/s; the sweep 12.0 s against 6.6 s without this term).
  double gemm_shared_tflops = 680;
  // - atomics (MethodKind::kAtomic): a launch and its wait per sample beside the timed ones
  //   (atomics.json 1.07 s, remeasure 1.49 s: 520 samples);
  double atomic_sample_s = 0.46e-3;
  // - gemm_rs (CaseSpec::tiles): the GEMM's operands and reference per case (gemm-rs-2gpu 9.64 s,
  //   its repeat 10.21 s: 120 cases, 6.8 s by the terms above);
  double tiled_case_s = 23.6e-3;
  // - latency_signal's payload (kRoundTrips): each way moves the payload (latency.json: 4 B to
  //   64 KiB; 13 s by the terms above of 16.4 s);
  double signal_s_per_byte = 4.27e-11;
  // - each flow of a pattern's case (not the matrix) beyond its first, per sample: its own
  //   timer's wait and figures in the lock-step, on ranks sharing a GPU (groups/patterns 6.82 s
  //   and its remeasure 6.46 s, 4.4 s by the terms above, 940 such flow-samples: 2.57 and
  //   2.19 ms each; the matrix runs, whose bidir cases have two flows, need none).
  double extra_flow_sample_s = 2.35e-3;
  // Not explained by these terms (estimate/real): groups/odd-3-ranks 0.64 and groups/crossnode
  // 0.46 (three and four ranks on two GPUs; crossnode's NCCL between emulated nodes),
  // ce-bidir 0.61 (a 0.5 s run), tokens-128 1.31 (168 cases of 128 tokens).

  // Latency costs no GPU should exceed (a slow link, every step's overhead): what a load beside
  // a latency case must outlast.
  static CaseCostModel upper_bound();
};

struct SweepEstimate {
  size_t cases = 0;
  size_t skipped = 0;        // static or group skips: they cost next to nothing
  uint64_t samples = 0;      // of the cases that run
  double bytes_moved = 0;    // over all samples and warm-up
  double seconds = 0;        // the sum of the parts below
  double setup_seconds = 0;  // per case and per sample overheads (and NCCL's set-up)
  double transfer_seconds = 0;
  double warmup_seconds = 0;
  double verify_seconds = 0;
};

// The estimate of `cases` on `layout` (skips from static_skip_reason and group_skip_reason).
SweepEstimate estimate(const Config& config, const std::vector<CaseSpec>& cases, const GroupLayout& layout,
                       const CaseCostModel& costs = CaseCostModel{});
// Two ranks on two GPUs.
SweepEstimate estimate(const Config& config, const std::vector<CaseSpec>& cases);

// One sample of a method that runs a fixed number of dependent steps (SampleCost kRoundTrips,
// kChaseLoads, kSmallCopies: the latency methods); 0 for the others.
double fixed_sample_seconds(const Config& config, const CaseSpec& c, const CaseCostModel& costs = CaseCostModel{});

// One transfer of the case's flows at once: its busiest GPU's bytes over the link (egress or
// ingress, whichever is larger) plus the bytes it copies within itself, at least the floor and
// at least what an SM kernel's blocks can move.
double concurrent_transfer_seconds(const CaseSpec& c, const GroupLayout& layout, const CaseCostModel& costs = CaseCostModel{});

}  // namespace p2pbench
