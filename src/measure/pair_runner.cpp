#include "measure/pair_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "kernels/pattern_kernels.hpp"
#include "stats/statistics.hpp"
#include "sweep/sweep.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kMaxIterations = 20000;  // transfers captured into one sample's graph
constexpr uint64_t kSlotAlignment = 4096;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

uint64_t sample_seed(uint64_t case_index, int sample) { return (case_index << 20) ^ uint64_t(sample) ^ 0x5eed5eedull; }

}  // namespace

RunnerOptions RunnerOptions::from(const Config& c, double timeout_scale) {
  RunnerOptions o;
  o.samples = c.samples;
  o.min_sample_time_ms = c.min_sample_time_ms;
  o.warmup_time_ms = c.warmup_time_ms;
  o.verify = c.verify;
  o.buffer_pool_bytes = c.buffer_pool_bytes;
  o.gate_timeout_s = c.gate_timeout_s;
  o.timeout_scale = timeout_scale;
  return o;
}

BufferLayout BufferLayout::for_case(uint64_t bytes, uint64_t pool_bytes) {
  BufferLayout l;
  l.stride = (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
  l.slots = (pool_bytes > l.stride) ? pool_bytes / l.stride : 1;
  return l;
}

PairRunner::PairRunner(const Communicator& comm, const RunnerOptions& options, int device, SharedGate& gate,
                       PeerBuffers& buffers)
    : comm_(comm),
      options_(options),
      device_(device),
      gate_(gate),
      buffers_(buffers),
      stream_(make_stream("transfers")),
      start_(make_event("the start of a sample")),
      stop_(make_event("the end of a sample")),
      stamps_(sizeof(kernels::GateStamps), "gate time stamps") {}

std::vector<json> PairRunner::step(const char* what, const std::function<void(json&)>& local) {
  json mine = {{"error", ""}, {"fatal", false}, {"data", json::object()}};
  try {
    local(mine["data"]);
  } catch (const CudaError& e) {
    mine["error"] = "rank " + std::to_string(comm_.rank()) + ": " + e.what();
    mine["fatal"] = e.sticky();
  } catch (const RuntimeFailure& e) {
    mine["error"] = "rank " + std::to_string(comm_.rank()) + ": " + e.what();
    mine["fatal"] = true;
  } catch (const std::exception& e) {
    mine["error"] = "rank " + std::to_string(comm_.rank()) + ": " + e.what();
  }
  std::vector<json> all;
  for (const auto& blob : comm_.allgather(mine.dump(), what)) all.push_back(json::parse(blob));
  return all;
}

bool PairRunner::failed(const std::vector<json>& results, CaseOutcome& out) {
  for (const auto& r : results) {
    if (r["error"].get<std::string>().empty()) continue;
    out.status = CaseStatus::kFailed;
    out.error += (out.error.empty() ? "" : "; ") + r["error"].get<std::string>();
    out.fatal = out.fatal || r["fatal"].get<bool>();
  }
  return out.status == CaseStatus::kFailed;
}

Transfer PairRunner::transfer_for(const CaseSpec& c, const Orientation& o, uint64_t slot,
                                  const BufferLayout& layout) const {
  const uint64_t offset = (slot % layout.slots) * layout.stride;
  // Push: the source GPU writes the peer's destination. Pull: the destination GPU reads the
  // peer's source. The driving rank sees its own buffers locally and the other's mapped.
  const bool push = c.direction == Direction::kPush;
  char* src = static_cast<char*>(push ? buffers_.local_src() : buffers_.peer_src());
  char* dst = static_cast<char*>(push ? buffers_.peer_dst() : buffers_.local_dst());
  (void)o;
  return {src + offset, dst + offset, size_t(c.bytes)};
}

double PairRunner::time_single_transfer_ms(TransferEngine& engine, const Transfer& t) {
  std::vector<double> ms;
  for (int i = 0; i < 3; ++i) {
    cuda_check(cudaEventRecord(start_.get(), stream_.get()), "recording a calibration start event");
    engine.launch(t, stream_.get());
    cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording a calibration stop event");
    wait_for(stop_.get(), 60.0 * options_.timeout_scale, "a calibration transfer");
    float elapsed = 0;
    cuda_check(cudaEventElapsedTime(&elapsed, start_.get(), stop_.get()), "reading a calibration time");
    ms.push_back(elapsed);
  }
  return quantile(ms, 0.5);
}

GraphExec PairRunner::capture(TransferEngine& engine, const CaseSpec& c, const Orientation& o,
                              const BufferLayout& layout, uint64_t iterations) {
  // A graph keeps the work queued behind the gate to one launch, so the host never blocks in
  // a full launch queue while the gate is closed.
  cuda_check(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal), "starting graph capture");
  try {
    for (uint64_t i = 0; i < iterations; ++i) engine.launch(transfer_for(c, o, i, layout), stream_.get());
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream_.get(), &broken);
    if (broken) cudaGraphDestroy(broken);
    throw;
  }
  cudaGraph_t raw = nullptr;
  cuda_check(cudaStreamEndCapture(stream_.get(), &raw), "ending graph capture");
  Graph graph(raw);
  cudaGraphExec_t exec = nullptr;
  cuda_check(cudaGraphInstantiate(&exec, graph.get(), 0), "instantiating the sample graph");
  return GraphExec(exec);
}

void PairRunner::wait_for(cudaEvent_t event, double deadline_s, const std::string& what) const {
  const auto t0 = Clock::now();
  while (true) {
    const cudaError_t err = cudaEventQuery(event);
    if (err == cudaSuccess) return;
    if (err != cudaErrorNotReady) cuda_check(err, "waiting for " + what);
    if (seconds_since(t0) > deadline_s)
      throw RuntimeFailure("rank " + std::to_string(comm_.rank()) + " timed out after " + std::to_string(deadline_s) +
                           " s waiting for " + what);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void PairRunner::record_sample(const CaseSpec& c, const std::vector<json>& finished, CaseOutcome& out) {
  std::vector<const json*> reports;  // one per driving rank, in rank order
  for (const auto& r : finished)
    if (r["data"].contains("elapsed_ms")) reports.push_back(&r["data"]);
  const double bytes = double(c.bytes) * double(out.iterations);
  if (c.mode == Mode::kUni) {
    const double ms = (*reports.at(0))["elapsed_ms"].get<double>();
    out.gbps.push_back(bytes / (ms * 1e-3) / 1e9);
    out.time_us.push_back(ms * 1e3 / double(out.iterations));
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
  CaseOutcome out;
  const int me = comm_.rank();
  const BufferLayout layout = BufferLayout::for_case(c.bytes, options_.buffer_pool_bytes);
  out.buffer_pool_bytes = layout.slots > 1 ? layout.footprint() : 0;
  auto engine = make_engine(c);

  // This rank's roles: the orientation it drives, and the buffers it fills or checks.
  std::optional<Orientation> drive;
  bool fills_src = false, owns_dst = false;
  for (const Orientation& o : orientations_of(c)) {
    if (CaseSpec::engine_rank(c.direction, o.src_rank, o.dst_rank) == me) drive = o;
    fills_src = fills_src || o.src_rank == me;
    owns_dst = owns_dst || o.dst_rank == me;
  }

  // 1. Skip what cannot run, for a reason every rank agrees on.
  auto skips = step("agreeing on skips", [&](json& d) {
    std::optional<std::string> reason = static_skip_reason(c);
    if (!reason && drive) reason = engine->unsupported_reason(device_);
    if (reason) d["skip"] = *reason;
  });
  for (const auto& s : skips)
    if (s["data"].contains("skip")) {
      out.status = CaseStatus::kSkipped;
      out.error = s["data"]["skip"].get<std::string>();
      return out;
    }
  if (failed(skips, out)) return out;

  // 2. Prepare, count SMs, and size a sample so it lasts at least min_sample_time.
  auto calibration = step("calibrating the case", [&](json& d) {
    cuda_check(cudaDeviceSynchronize(), "finishing earlier work");
    if (fills_src) kernels::fill_pattern(buffers_.local_src(), layout.footprint(), sample_seed(case_index, 0), 0, stream_.get());
    if (!drive) return;
    engine->prepare(device_);
    const Transfer first = transfer_for(c, *drive, 0, layout);
    if (auto sms = engine->measure_sms_used(first, stream_.get())) d["sms_used"] = *sms;
    const double single_ms = std::max(1e-4, time_single_transfer_ms(*engine, first));
    d["iterations"] = uint64_t(std::clamp(std::ceil(options_.min_sample_time_ms / single_ms), 1.0, double(kMaxIterations)));
  });
  if (failed(calibration, out)) return out;
  for (const auto& r : calibration) {
    out.iterations = std::max<uint64_t>(out.iterations, r["data"].value("iterations", uint64_t(0)));
    if (r["data"].contains("sms_used")) out.sms_used = std::max(out.sms_used.value_or(0), r["data"]["sms_used"].get<int>());
  }

  // 3. Capture the sample's work and warm up by time.
  GraphExec graph;
  auto warmup = step("warming up", [&](json&) {
    if (!drive) return;
    graph = capture(*engine, c, *drive, layout, out.iterations);
    const auto t0 = Clock::now();
    do {
      cuda_check(cudaGraphLaunch(graph.get(), stream_.get()), "launching a warm-up sample");
      cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording a warm-up event");
      wait_for(stop_.get(), 60.0 * options_.timeout_scale + 1e-3 * options_.min_sample_time_ms * 100, "warm-up");
    } while (seconds_since(t0) * 1e3 < options_.warmup_time_ms);
  });
  if (failed(warmup, out)) return out;

  // 4. Samples: fill and poison, queue behind the closed gate, open it, wait, verify.
  auto* stamps = static_cast<kernels::GateStamps*>(stamps_.host());
  const double gate_timeout_s = options_.gate_timeout_s * options_.timeout_scale;
  const uint64_t slots_used = std::min<uint64_t>(layout.slots, out.iterations);
  bool all_verified = options_.verify;
  for (int s = 0; s < options_.samples; ++s) {
    const uint64_t seed = sample_seed(case_index, s + 1);
    auto prepared = step("preparing a sample", [&](json&) {
      if (!options_.verify) return;
      if (fills_src) kernels::fill_pattern(buffers_.local_src(), layout.footprint(), seed, 0, stream_.get());
      if (owns_dst) kernels::fill_poison(buffers_.local_dst(), layout.footprint(), seed, 0, stream_.get());
      cuda_check(cudaStreamSynchronize(stream_.get()), "filling and poisoning the buffers");
    });
    if (failed(prepared, out)) break;

    const uint32_t ticket = ++ticket_;
    bool queued = false;
    auto queue = step("queueing a sample behind the gate", [&](json&) {
      if (!drive) return;
      *stamps = {0, 0, 0, 0};
      kernels::enqueue_gate_wait(gate_.device_word(), ticket, uint64_t(gate_timeout_s * 1e9),
                                 static_cast<kernels::GateStamps*>(stamps_.device()), stream_.get());
      queued = true;
      cuda_check(cudaEventRecord(start_.get(), stream_.get()), "recording a sample's start event");
      cuda_check(cudaGraphLaunch(graph.get(), stream_.get()), "launching a sample");
      cuda_check(cudaEventRecord(stop_.get(), stream_.get()), "recording a sample's stop event");
      kernels::enqueue_end_stamp(static_cast<kernels::GateStamps*>(stamps_.device()), stream_.get());
    });
    if (me == 0) gate_.release(ticket);  // always: a rank that did queue must never spin out

    auto finished = step("finishing a sample", [&](json& d) {
      if (!queued) return;
      const double expected_s = (1e-3 * options_.min_sample_time_ms * 100 + 10.0) * options_.timeout_scale;
      wait_for(stop_.get(), gate_timeout_s + expected_s, "sample " + std::to_string(s) + " of " + c.name());
      cuda_check(cudaStreamSynchronize(stream_.get()), "waiting for the end stamp");  // one tiny kernel left
      if (stamps->timed_out)
        throw RuntimeFailure("rank " + std::to_string(me) + ": the start gate never opened within " +
                             std::to_string(gate_timeout_s) + " s");
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "reading a sample's time");
      d["elapsed_ms"] = ms;
      // The window from the gate's release to the end of the work, on this GPU's own timer.
      d["window_ns"] = double(stamps->end_ns - stamps->release_ns);
      d["src"] = drive->src_rank;
      d["dst"] = drive->dst_rank;
    });
    if (failed(queue, out) || failed(finished, out)) break;

    // Only now, with every driving rank finished, may the destination be read.
    auto verified = step("verifying a sample", [&](json& d) {
      if (!options_.verify || !owns_dst) return;
      for (uint64_t k = 0; k < slots_used; ++k) {
        char* dst = static_cast<char*>(buffers_.local_dst()) + k * layout.stride;
        if (auto bad = engine->verify(dst, c.bytes, seed, k * layout.stride, stream_.get())) {
          d["verify_error"] = "verification failed on rank " + std::to_string(me) + " (sample " + std::to_string(s) +
                              ", slot " + std::to_string(k) + "): " + *bad;
          return;
        }
      }
    });
    if (failed(verified, out)) break;
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
