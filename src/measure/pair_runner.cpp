#include "measure/pair_runner.hpp"

#include <algorithm>
#include <cmath>

#include "common/errors.hpp"
#include "kernels/pattern_kernels.hpp"
#include "stats/statistics.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

uint64_t sample_seed(uint64_t case_index, int sample) { return (case_index << 20) ^ uint64_t(sample) ^ 0x5eed5eedull; }

}  // namespace

RunnerOptions RunnerOptions::from(const Config& c, double timeout_scale, Watchdog* watchdog, bool sanitizer_mode) {
  RunnerOptions o;
  o.samples = c.samples;
  o.min_sample_time_ms = c.min_sample_time_ms;
  o.warmup_time_ms = c.warmup_time_ms;
  o.verify = c.verify;
  o.buffer_pool_bytes = c.buffer_pool_bytes;
  o.gate_timeout_s = c.gate_timeout_s;
  o.timeout_scale = timeout_scale;
  o.latency = c.latency;
  o.watchdog = watchdog;
  o.sanitizer_mode = sanitizer_mode;
  return o;
}

BufferLayout BufferLayout::for_case(uint64_t bytes, uint64_t pool_bytes) {
  // A size within 4 KiB of 2^64 would round up to a stride of 0 (every slot at one address):
  // refused here as well as up front (device_memory_need), whoever calls this.
  const auto stride = buffer_slot_stride(bytes);
  if (!stride)
    throw InputError("sizes", std::to_string(bytes), "rounded up to whole buffer slots it does not fit in 64 bits");
  BufferLayout l;
  l.stride = *stride;
  l.slots = (pool_bytes > l.stride) ? pool_bytes / l.stride : 1;
  return l;
}

PairRunner::PairRunner(const Communicator& comm, const RunnerOptions& options, int device, SharedGate& gate,
                       PeerBuffers& buffers, BaselineResources* baselines)
    : comm_(comm),
      steps_(comm, options.watchdog),
      options_(options),
      device_(device),
      gate_(gate),
      buffers_(buffers),
      timer_(options.timeout_scale, options.sanitizer_mode),
      baselines_(baselines) {}

Endpoints PairRunner::endpoints_for(const TransferEngine& engine) {
  Endpoints e{buffers_.local_src(), buffers_.local_dst(), buffers_.peer_src(), buffers_.peer_dst(), nullptr};
  if (engine.needs_host_buffer()) {
    if (!host_buffer_) host_buffer_.emplace(buffers_.capacity(), "the host-link buffer");
    e.host = host_buffer_->device();
  }
  return e;
}

void PairRunner::record_sample(const CaseSpec& c, const std::vector<json>& finished, CaseOutcome& out) {
  std::vector<const json*> reports;  // one per driving rank, in rank order
  for (const auto& r : finished)
    if (r["data"].contains("elapsed_ms")) reports.push_back(&r["data"]);
  const double bytes = double(c.bytes) * double(out.iterations);
  if (c.mode == Mode::kUni && reports.size() == 1) {
    const double ms = (*reports.at(0))["elapsed_ms"].get<double>();
    out.gbps.push_back(bytes / (ms * 1e-3) / 1e9);
    out.time_us.push_back(ms * 1e3 / double(out.iterations));
    return;
  }
  if (c.mode == Mode::kUni) {
    // Two-sided: both ends started at the gate; the transfer ends when the later one does.
    const double ns = std::max((*reports.at(0))["window_ns"].get<double>(), (*reports.at(1))["window_ns"].get<double>());
    out.gbps.push_back(bytes / (ns * 1e-9) / 1e9);
    out.time_us.push_back(ns * 1e-3 / double(out.iterations));
    return;
  }
  if (out.directions.empty())
    for (const json* r : reports) out.directions.push_back({(*r)["src"].get<int>(), (*r)["dst"].get<int>(), {}, {}});
  // Both windows start at the gate's release: one host store that both GPUs see within about
  // a microsecond. Each GPU's own timer measures its window, so the timers' offset and drift
  // (recorded in meta.timer_calibration) do not enter.
  Window w[2];
  for (size_t i = 0; i < 2; ++i) {
    const json& r = *reports.at(i);
    const double ms = r["elapsed_ms"].get<double>();
    out.directions[i].gbps.push_back(bytes / (ms * 1e-3) / 1e9);
    out.directions[i].time_us.push_back(ms * 1e3 / double(out.iterations));
    w[i] = {0.0, r["window_ns"].get<double>()};
  }
  const WindowPair pair = combine(w[0], w[1]);
  out.gbps.push_back(2.0 * bytes / (pair.union_ns * 1e-9) / 1e9);
  out.time_us.push_back(pair.union_ns * 1e-3 / double(out.iterations));
  out.overlap.push_back(pair.overlap());
}

CaseOutcome PairRunner::run(const CaseSpec& c, uint64_t case_index) {
  // The case's graph ends with the case, before any baseline's resources may be released.
  struct GraphRelease {
    TransferTimer& timer;
    ~GraphRelease() { timer.release_graph(); }
  } release_graph_at_exit{timer_};
  CaseOutcome out;
  const int me = comm_.rank();
  std::unique_ptr<TransferEngine> engine = make_engine(c);
  if (!engine && baselines_) engine = baselines_->make_engine(c);
  if (!engine) {
    out.status = CaseStatus::kSkipped;
    out.error = std::string("method ") + to_string(c.method) + " is not available in this build";
    return out;
  }
  const BufferLayout layout = BufferLayout::for_case(c.bytes, engine->rotates_buffers() ? options_.buffer_pool_bytes : 0);
  out.buffer_pool_bytes = layout.slots > 1 ? layout.footprint() : 0;

  // This rank's roles: the orientations whose work it enqueues (one-sided methods: the source
  // for push, the destination for pull; two-sided methods: both ends), and the buffers it
  // fills or checks.
  std::vector<Flow> mine;
  bool fills_src = false, owns_dst = false;
  for (const Flow& o : flows_of(c)) {
    const bool participates = engine->two_sided() ? (o.src_rank == me || o.dst_rank == me)
                                                   : CaseSpec::engine_rank(c.direction, o.src_rank, o.dst_rank) == me;
    if (participates) mine.push_back(o);
    fills_src = fills_src || o.src_rank == me;
    owns_dst = owns_dst || o.dst_rank == me;
  }
  const bool drive = !mine.empty();

  // 1. Skip what cannot run, for a reason every rank agrees on.
  auto skips = steps_.run("agreeing on skips", [&](json& d) {
    std::optional<std::string> reason = static_skip_reason(c);
    if (!reason && needs_peer_mapping(c.method) && buffers_.no_peer_reason()) reason = *buffers_.no_peer_reason();
    if (!reason && drive) reason = engine->unsupported_reason(device_);
    if (reason) d["skip"] = *reason;
  });
  for (const auto& s : skips)
    if (s["data"].contains("skip")) {
      out.status = CaseStatus::kSkipped;
      out.error = s["data"]["skip"].get<std::string>();
      return out;
    }
  if (LockStep::failed(skips, out)) return out;

  // 2. Prepare, count SMs, and size a sample so it lasts at least min_sample_time.
  const cudaStream_t stream = timer_.stream();
  const Endpoints ends = endpoints_for(*engine);
  const auto transfer = [&](uint64_t index) {
    return engine->transfer(c.direction, ends, (index % layout.slots) * layout.stride, size_t(c.bytes));
  };
  const auto enqueue = [&](uint64_t index, cudaStream_t s) {
    if (!engine->two_sided()) return engine->launch(transfer(index), s);
    // Two-sided engines launch this rank's part of each flow it sends or receives, all at once.
    std::vector<Transfer> sides;
    for (const Flow& f : mine) {
      Endpoints e = ends;
      e.flow = f;
      sides.push_back(engine->transfer(c.direction, e, (index % layout.slots) * layout.stride, size_t(c.bytes)));
    }
    engine->launch_fused(sides, s);
  };
  char* const source = static_cast<char*>(engine->source_region(ends));
  char* const destination = static_cast<char*>(engine->destination_region(ends));
  auto calibration = steps_.run("calibrating the case", [&](json& d) {
    cuda_check(cudaDeviceSynchronize(), "finishing earlier work");
    if (fills_src) engine->fill_source(source, layout.footprint(), sample_seed(case_index, 0), stream);
    if (!drive) return;
    engine->prepare(device_, me, mine);
    if (auto sms = engine->measure_sms_used(transfer(0), stream)) d["sms_used"] = *sms;
    const double single_ms = timer_.time_single_ms(enqueue);
    d["single_ms"] = single_ms;
    d["iterations"] = TransferTimer::iterations_for(single_ms, options_.min_sample_time_ms);
  }, 3 * TransferTimer::kUngatedWaitS);
  if (LockStep::failed(calibration, out)) return out;
  double single_ms = 0;  // the slowest rank's: warm-up launches are counted, the same on every rank
  for (const auto& r : calibration) {
    single_ms = std::max(single_ms, r["data"].value("single_ms", 0.0));
    out.iterations = std::max<uint64_t>(out.iterations, r["data"].value("iterations", uint64_t(0)));
    if (r["data"].contains("sms_used")) out.sms_used = std::max(out.sms_used.value_or(0), r["data"]["sms_used"].get<int>());
  }

  out.iterations = engine->usable_iterations(out.iterations);
  engine->set_iterations(out.iterations);

  // 3. Capture the sample's work and warm up (a launch count every rank shares).
  auto warmup = steps_.run("warming up", [&](json&) {
    if (!drive) return;
    timer_.build(enqueue, out.iterations);
    timer_.warm_up_launches(TransferTimer::warmup_launches_for(single_ms, out.iterations, options_.warmup_time_ms));
  }, TransferTimer::kUngatedWaitS + 2e-3 * options_.warmup_time_ms);
  if (LockStep::failed(warmup, out)) return out;

  // 4. Samples: fill and poison, queue behind the closed gate, open it, wait, verify.
  const double gate_timeout_s = options_.gate_timeout_s * options_.timeout_scale;
  const double deadline_s = gate_timeout_s + (1e-3 * options_.min_sample_time_ms * 100 + 10.0) * options_.timeout_scale;
  const uint64_t slots_used = std::min<uint64_t>(layout.slots, out.iterations);
  bool all_verified = options_.verify;
  for (int s = 0; s < options_.samples; ++s) {
    const uint64_t seed = sample_seed(case_index, s + 1);
    auto prepared = steps_.run("preparing a sample", [&](json&) {
      if (!options_.verify) return;
      if (fills_src) engine->fill_source(source, layout.footprint(), seed, stream);
      if (owns_dst) engine->poison_destination(destination, layout.footprint(), seed, stream);
      cuda_check(cudaStreamSynchronize(stream), "filling and poisoning the buffers");
    });
    if (LockStep::failed(prepared, out)) break;

    const uint32_t ticket = gate_.next_ticket();
    bool queued = false;
    auto queue = steps_.run("queueing a sample behind the gate", [&](json&) {
      if (!drive) return;
      queued = true;
      timer_.enqueue_gated(gate_.device_word(), ticket, gate_timeout_s);
    });
    if (me == 0) gate_.release(ticket);  // always: a rank that did queue must never spin out

    auto finished = steps_.run("finishing a sample", [&](json& d) {
      if (!queued) return;
      const TransferTimer::Sample sample = timer_.wait(deadline_s, "sample " + std::to_string(s) + " of " + c.name());
      d["elapsed_ms"] = sample.elapsed_ms;
      d["window_ns"] = sample.window_ns;
      // Bidir two-sided ranks both send and receive: label the window by what this rank sends.
      d["src"] = mine.size() == 1 ? mine[0].src_rank : me;
      d["dst"] = mine.size() == 1 ? mine[0].dst_rank : 1 - me;
    }, deadline_s / options_.timeout_scale);
    if (LockStep::failed(queue, out) || LockStep::failed(finished, out)) break;

    // Only now, with every driving rank finished, may the destination be read.
    auto verified = steps_.run("verifying a sample", [&](json& d) {
      if (!options_.verify || !owns_dst) return;
      for (uint64_t k = 0; k < slots_used; ++k) {
        if (auto bad = engine->verify(destination + k * layout.stride, c.bytes, seed, k * layout.stride, stream)) {
          d["verify_error"] = "verification failed on rank " + std::to_string(me) + " (sample " + std::to_string(s) +
                              ", slot " + std::to_string(k) + "): " + *bad;
          return;
        }
      }
    });
    if (LockStep::failed(verified, out)) break;
    for (const auto& r : verified)
      if (r["data"].contains("verify_error")) {
        out.status = CaseStatus::kFailed;
        out.error = r["data"]["verify_error"].get<std::string>();
      }
    if (out.status == CaseStatus::kFailed) {
      all_verified = false;
      break;
    }
    record_sample(c, finished, out);
  }
  out.verified = all_verified && out.status == CaseStatus::kOk;
  return out;
}

}  // namespace p2pbench
