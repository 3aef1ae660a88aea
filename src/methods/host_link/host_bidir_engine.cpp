// Both directions of a GPU's host link at once, through the copy engine, as nvbandwidth's
// host_to_device_bidirectional_memcpy_ce and device_to_host_bidirectional_memcpy_ce measure it:
//   h2d_bidir  the host -> device copy is timed while a device -> host copy runs on another stream
//   d2h_bidir  the device -> host copy is timed while a host -> device copy runs on another stream
// The row's figure is the named direction's alone. The copy beside it has buffers of its own
// (pinned host and device memory, twice the case's bytes per copy, as nvbandwidth's "double the
// size of the interference copy"), is not timed, and must cover the timed one: it is queued
// behind the sample's gate and starts once a short lead-in copy of the timed stream ran
// (enqueue_beside); a sample that ended after its beside copies fails (on the GPU's clock). Both
// directions' bytes are verified after every sample the case loop fills.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/event_wait.hpp"
#include "common/text_format.hpp"
#include "engines/engine_registry.hpp"
#include "engines/host_link_engine.hpp"
#include "kernels/pattern_kernels.hpp"

namespace p2pbench {
namespace {

constexpr double kBesideWaitS = 120.0;  // one beside run is at most a few seconds of copies
constexpr uint64_t kBesideSeedSalt = 0xb1d1b1d1b1d1b1d1ull;
constexpr size_t kLeadInBytes = size_t(1) << 20;  // about 20 us of the timed direction

class HostBidirEngine final : public HostLinkEnds {  // its Kind: the timed direction
 public:
  HostBidirEngine(Kind kind, uint64_t bytes, HostMemoryKind memory)
      : HostLinkEnds(kind, memory), beside_bytes_(2 * bytes) {}
  // A case that failed mid-sample may leave beside copies running: they end before their
  // buffers go (a wait that gives up is reported, not thrown, in a destructor).
  ~HostBidirEngine() override {
    try {
      finish_beside();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "p2pbench: %s\n", e.what());
    }
  }
  HostBidirEngine(const HostBidirEngine&) = delete;
  HostBidirEngine& operator=(const HostBidirEngine&) = delete;

  // The pattern's fill and check address the host buffer through its device mapping.
  std::optional<std::string> unsupported_reason(int) const override {
    return pageable_refusal("the timed copy's host buffer is filled and checked");
  }
  void prepare(int, int, const std::vector<Flow>&) override {}
  void launch(const Transfer& t, cudaStream_t stream) override {
    if (!lead_in_.dst) lead_in_ = {t.dst, t.src, std::min<size_t>(t.bytes, kLeadInBytes)};
    copy(t, stream);
  }
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }
  void set_iterations(uint64_t n) override { iterations_ = n; }

  // The last step of a sample's fill fills the beside buffers too.
  void poison_destination(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) override {
    TransferEngine::poison_destination(region, bytes, seed, stream);
    fill_beside(seed ^ kBesideSeedSalt, stream);
  }
  // Calibration and warm-up are not gated and run without the beside copies: they only size
  // and warm the sample.
  void enqueue_beside(cudaStream_t timed_stream, cudaEvent_t sample_end) override;
  std::optional<std::string> stalled() override;
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;

 private:
  const char* beside_name() const { return kind_ == kHostToDevice ? "device-to-host" : "host-to-device"; }
  void* beside_src() const { return kind_ == kHostToDevice ? beside_device_.get() : beside_host_.device(); }
  void* beside_dst() const { return kind_ == kHostToDevice ? beside_host_.device() : beside_device_.get(); }
  // As many copies of twice the bytes as the sample has transfers: they end after it unless the
  // beside direction runs more than twice as fast as the timed one (then stalled() says so).
  uint64_t beside_copies() const { return iterations_; }
  void allocate();
  void build_beside_graph();
  void fill_beside(uint64_t seed, cudaStream_t timed_stream);
  void finish_beside();

  uint64_t beside_bytes_;  // per beside copy; its host buffer is pinned, whatever the case's kind
  uint64_t iterations_ = 0;  // 0 until the case loop has calibrated
  DeviceBuffer beside_device_;
  MappedHostBuffer beside_host_;
  Stream beside_stream_;
  Event filled_, lead_in_done_, beside_end_;  // beside_end_ is timed: stalled() compares it
  cudaEvent_t sample_end_ = nullptr;           // the timer's, recorded after the sample's transfers
  struct {
    void* dst = nullptr;
    const void* src = nullptr;
    size_t bytes = 0;
  } lead_in_;  // the start of the first timed transfer, copied once the gate opens
  GraphExec beside_graph_;
  uint64_t graph_copies_ = 0;
  uint64_t beside_seed_ = 0;
  bool filled_for_next_ = false;  // the beside buffers hold beside_seed_'s bytes for the next run
  bool running_ = false;          // a beside run was queued and not yet waited for
  bool unchecked_ = false;        // ... and stalled() has not yet asked whether it covered the sample
  bool unverified_ = false;       // ... and its bytes (of a filled sample) were not yet verified
};

void HostBidirEngine::allocate() {
  if (beside_stream_) return;
  beside_device_ = DeviceBuffer(beside_bytes_, "the device buffer of the copy beside the timed one");
  beside_host_ = MappedHostBuffer(beside_bytes_, "the host buffer of the copy beside the timed one");
  beside_stream_ = make_stream("the copy beside the timed one");
  filled_ = make_untimed_event("the beside copy's buffers filled");
  lead_in_done_ = make_untimed_event("the end of the lead-in copy");
  beside_end_ = make_event("the end of the beside copies");
}

void HostBidirEngine::build_beside_graph() {
  if (beside_graph_ && graph_copies_ == beside_copies()) return;
  beside_graph_ = GraphExec();
  cudaStream_t s = beside_stream_.get();
  const Graph graph = capture_graph(s, [&] {
    for (uint64_t i = 0; i < beside_copies(); ++i)
      cuda_check(cudaMemcpyAsync(beside_dst(), beside_src(), beside_bytes_, cudaMemcpyDefault, s),
                 std::string("capturing the beside ") + beside_name() + " copies");
  }, "the beside copies");
  beside_graph_ = instantiate(graph, "the beside copies' graph");
  graph_copies_ = beside_copies();
}

void HostBidirEngine::finish_beside() {
  if (!running_) return;
  wait_for_event(beside_end_.get(), kBesideWaitS, std::string("the ") + beside_name() + " copies beside the timed one");
  running_ = false;
}

// The beside buffers are filled and poisoned on their own stream, after any earlier beside run
// ended; the timed stream waits for that (the case loop then synchronises it).
void HostBidirEngine::fill_beside(uint64_t seed, cudaStream_t timed_stream) {
  if (iterations_ == 0) return;  // calibrating: no beside copies
  allocate();
  finish_beside();
  cudaStream_t s = beside_stream_.get();
  kernels::fill_pattern(beside_src(), beside_bytes_, seed, 0, s);
  kernels::fill_poison(beside_dst(), beside_bytes_, seed, 0, s);
  cuda_check(cudaEventRecord(filled_.get(), s), "recording the beside copy's filled buffers");
  cuda_check(cudaStreamWaitEvent(timed_stream, filled_.get(), 0), "ordering the sample after the beside copy's fill");
  beside_seed_ = seed;
  filled_for_next_ = true;
}

// Queued while the gate is shut. When it opens, the timed stream copies a lead-in (untimed) and
// the beside copies start once it ran, so that the sample's copies are on the copy engine before
// a device-to-host copy fills the link: the GPU took up work queued behind a running one late
// (a gate kernel queued while the beside copies already ran passed 38.8 ms after they began).
void HostBidirEngine::enqueue_beside(cudaStream_t timed_stream, cudaEvent_t sample_end) {
  if (iterations_ == 0 || !lead_in_.dst) return;
  sample_end_ = sample_end;
  allocate();
  finish_beside();
  build_beside_graph();
  cudaStream_t s = beside_stream_.get();
  cuda_check(cudaMemcpyAsync(lead_in_.dst, lead_in_.src, lead_in_.bytes, cudaMemcpyDefault, timed_stream),
             "enqueuing the lead-in copy before a sample");
  cuda_check(cudaEventRecord(lead_in_done_.get(), timed_stream), "recording the end of the lead-in copy");
  cuda_check(cudaStreamWaitEvent(s, lead_in_done_.get(), 0), "holding the beside copies until the lead-in copy ran");
  cuda_check(cudaGraphLaunch(beside_graph_.get(), s), std::string("launching the beside ") + beside_name() + " copies");
  cuda_check(cudaEventRecord(beside_end_.get(), s), "recording the end of the beside copies");
  running_ = unchecked_ = true;
  unverified_ = filled_for_next_;
  filled_for_next_ = false;
}

// Right after the timed sample ended: the copies beside it must end after it, compared on the
// GPU's clock. Asked from the host once the sample's wait returned (its end stamp included), an
// h2d_bidir case that was a run's first found them ended (12 of 12 runs); on the GPU's clock 0 of 6.
std::optional<std::string> HostBidirEngine::stalled() {
  if (iterations_ == 0) return std::nullopt;  // calibrating: no beside copies yet
  if (!unchecked_) return std::string("no ") + beside_name() + " copy was queued beside this sample";
  unchecked_ = false;
  finish_beside();
  float after_ms = 0;
  cuda_check(cudaEventElapsedTime(&after_ms, sample_end_, beside_end_.get()),
             "comparing the end of the beside copies with the sample's");
  if (after_ms >= 0) return std::nullopt;
  return text_format("the %s copies beside the sample ended %.3f ms before it: not a bidirectional figure",
                     beside_name(), double(-after_ms));
}

// Each sample's first check verifies the beside copy's bytes as well (once it has ended).
std::optional<std::string> HostBidirEngine::verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                                   cudaStream_t stream) {
  if (unverified_) {
    unverified_ = false;
    finish_beside();
    if (auto bad = TransferEngine::verify(beside_dst(), beside_bytes_, beside_seed_, 0, stream))
      return std::string("the ") + beside_name() + " copy beside it: " + *bad;
  }
  return TransferEngine::verify(dst, bytes, seed, offset, stream);
}

MethodInfo bidir_method(const char* name, const char* title, const char* color, int order, const char* help) {
  return MethodInfo{Method{}, name, MethodKind::kHostLink, {}, title, color, order, false, "", help};
}

}  // namespace

P2PBENCH_REGISTER_METHOD(kH2dBidir,
                         bidir_method("h2d_bidir", "host→device beside device→host", "tab:brown", 72,
                                      "pinned host memory to the rank's own GPU (copy engine), timed while a "
                                      "device-to-host copy of its own buffers runs beside it (nvbandwidth's "
                                      "host_to_device_bidirectional_memcpy_ce)"),
                         [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
                           return std::make_unique<HostBidirEngine>(HostBidirEngine::kHostToDevice, c.bytes,
                                                            c.host_memory.value_or(HostMemoryKind::kPinned));
                         });
P2PBENCH_REGISTER_METHOD(kD2hBidir,
                         bidir_method("d2h_bidir", "device→host beside host→device", "tab:pink", 73,
                                      "the rank's own GPU to pinned host memory (copy engine), timed while a "
                                      "host-to-device copy of its own buffers runs beside it (nvbandwidth's "
                                      "device_to_host_bidirectional_memcpy_ce)"),
                         [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
                           return std::make_unique<HostBidirEngine>(HostBidirEngine::kDeviceToHost, c.bytes,
                                                            c.host_memory.value_or(HostMemoryKind::kPinned));
                         });

}  // namespace p2pbench
