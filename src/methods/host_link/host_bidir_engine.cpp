// Both directions of a GPU's host link at once, through the copy engine, as nvbandwidth's
// host_to_device_bidirectional_memcpy_ce and device_to_host_bidirectional_memcpy_ce measure it:
//   h2d_bidir  the host -> device copy is timed while a device -> host copy runs on another stream
//   d2h_bidir  the device -> host copy is timed while a host -> device copy runs on another stream
// The row's figure is the named direction's alone. The copy beside it has buffers of its own
// (pinned host and device memory, twice the case's bytes per copy, as nvbandwidth's "double the
// size of the interference copy"), is not timed, and must cover the timed one: it starts before
// the sample's gate opens and a sample whose beside copy had already ended fails. Both
// directions' bytes are verified after every sample; the beside copy is started by the sample's
// fill, so these methods need verification on (a sample without it fails and says so).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <memory>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/event_wait.hpp"
#include "engines/engine_registry.hpp"
#include "engines/host_link_engine.hpp"
#include "kernels/pattern_kernels.hpp"

namespace p2pbench {
namespace {

// The beside copies run this many bytes beyond twice the timed bytes (about 5 ms at 50 GB/s): the
// margin for the steps between their start and the gate's release.
constexpr uint64_t kBesideMarginBytes = uint64_t(256) << 20;
constexpr double kBesideWaitS = 120.0;  // one beside run is at most a few seconds of copies
constexpr uint64_t kBesideSeedSalt = 0xb1d1b1d1b1d1b1d1ull;

class HostBidirEngine final : public HostLinkEnds {  // its Kind: the timed direction
 public:
  HostBidirEngine(Kind kind, uint64_t bytes, HostMemoryKind memory)
      : HostLinkEnds(kind), beside_bytes_(2 * bytes), memory_(memory) {}
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
    if (memory_ == HostMemoryKind::kPageable)
      return "the timed copy's host buffer is filled and checked through a device mapping, which pageable memory "
             "has none of";
    return std::nullopt;
  }
  void prepare(int, int, const std::vector<Flow>&) override {}
  void launch(const Transfer& t, cudaStream_t stream) override {
    cuda_check(cudaMemcpyAsync(t.dst, t.src, t.bytes, cudaMemcpyDefault, stream),
               kind_ == kHostToDevice ? "enqueuing a host-to-device copy" : "enqueuing a device-to-host copy");
  }
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }
  void set_iterations(uint64_t n) override { iterations_ = n; }

  // The last step of a sample's fill: the beside copies start here (calibration, which poisons
  // nothing, runs without them: it only sizes the sample).
  void poison_destination(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) override {
    TransferEngine::poison_destination(region, bytes, seed, stream);
    start_beside(seed ^ kBesideSeedSalt, stream);
  }
  std::optional<std::string> stalled() override;
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;

 private:
  const char* beside_name() const { return kind_ == kHostToDevice ? "device-to-host" : "host-to-device"; }
  void* beside_src() const { return kind_ == kHostToDevice ? beside_device_.get() : beside_host_.device(); }
  void* beside_dst() const { return kind_ == kHostToDevice ? beside_host_.device() : beside_device_.get(); }
  uint64_t beside_copies() const {
    return iterations_ + (kBesideMarginBytes + beside_bytes_ - 1) / beside_bytes_;
  }
  void allocate();
  void build_beside_graph();
  void start_beside(uint64_t seed, cudaStream_t timed_stream);
  void finish_beside();

  uint64_t beside_bytes_;
  HostMemoryKind memory_;  // of the timed copy's host buffer (the beside copy's is always pinned)
  uint64_t iterations_ = 0;  // 0 until the case loop has calibrated
  DeviceBuffer beside_device_;
  MappedHostBuffer beside_host_;
  Stream beside_stream_;
  Event ready_, filled_, beside_end_;
  GraphExec beside_graph_;
  uint64_t graph_copies_ = 0;
  uint64_t beside_seed_ = 0;
  bool running_ = false;     // a beside run was started and not yet waited for
  bool unchecked_ = false;   // ... and stalled() has not yet asked whether it covered the sample
  bool unverified_ = false;  // ... and its bytes were not yet verified
};

void HostBidirEngine::allocate() {
  if (beside_stream_) return;
  beside_device_ = DeviceBuffer(beside_bytes_, "the device buffer of the copy beside the timed one");
  beside_host_ = MappedHostBuffer(beside_bytes_, "the host buffer of the copy beside the timed one");
  beside_stream_ = make_stream("the copy beside the timed one");
  ready_ = make_untimed_event("the timed copy's buffers filled");
  filled_ = make_untimed_event("the beside copy's buffers filled");
  beside_end_ = make_untimed_event("the end of the beside copies");
}

void HostBidirEngine::build_beside_graph() {
  if (beside_graph_ && graph_copies_ == beside_copies()) return;
  beside_graph_ = GraphExec();
  cudaStream_t s = beside_stream_.get();
  cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "starting the beside copies' capture");
  for (uint64_t i = 0; i < beside_copies(); ++i) {
    const cudaError_t e = cudaMemcpyAsync(beside_dst(), beside_src(), beside_bytes_, cudaMemcpyDefault, s);
    if (e != cudaSuccess) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(s, &broken);
      if (broken) cudaGraphDestroy(broken);
      cuda_check(e, std::string("capturing the beside ") + beside_name() + " copies");
    }
  }
  cudaGraph_t raw = nullptr;
  cuda_check(cudaStreamEndCapture(s, &raw), "ending the beside copies' capture");
  Graph graph(raw);
  cudaGraphExec_t exec = nullptr;
  cuda_check(cudaGraphInstantiate(&exec, graph.get(), 0), "instantiating the beside copies' graph");
  beside_graph_ = GraphExec(exec);
  graph_copies_ = beside_copies();
}

void HostBidirEngine::finish_beside() {
  if (!running_) return;
  wait_for_event(beside_end_.get(), kBesideWaitS, std::string("the ") + beside_name() + " copies beside the timed one");
  running_ = false;
}

// The beside buffers are filled and poisoned on their own stream; the timed stream waits for
// that (the case loop then synchronises it), and the beside copies wait for the timed buffers'
// fill, so they are running before the sample is queued behind the gate.
void HostBidirEngine::start_beside(uint64_t seed, cudaStream_t timed_stream) {
  if (iterations_ == 0) return;
  allocate();
  finish_beside();
  build_beside_graph();
  cudaStream_t s = beside_stream_.get();
  kernels::fill_pattern(beside_src(), beside_bytes_, seed, 0, s);
  kernels::fill_poison(beside_dst(), beside_bytes_, seed, 0, s);
  cuda_check(cudaEventRecord(ready_.get(), timed_stream), "recording the timed copy's filled buffers");
  cuda_check(cudaStreamWaitEvent(s, ready_.get(), 0), "ordering the beside copies after the timed copy's fill");
  cuda_check(cudaEventRecord(filled_.get(), s), "recording the beside copy's filled buffers");
  cuda_check(cudaStreamWaitEvent(timed_stream, filled_.get(), 0), "ordering the sample after the beside copy's fill");
  cuda_check(cudaGraphLaunch(beside_graph_.get(), s), std::string("launching the beside ") + beside_name() + " copies");
  cuda_check(cudaEventRecord(beside_end_.get(), s), "recording the end of the beside copies");
  beside_seed_ = seed;
  running_ = unchecked_ = unverified_ = true;
}

// Right after the timed sample ended: the copy beside it must still be running.
std::optional<std::string> HostBidirEngine::stalled() {
  if (iterations_ == 0) return std::nullopt;  // calibrating: no beside copies yet
  if (!unchecked_)
    return std::string("no ") + beside_name() + " copy ran beside this sample (it starts with the sample's fill: "
           "run this method with verification on)";
  unchecked_ = false;
  const cudaError_t state = cudaEventQuery(beside_end_.get());
  if (state == cudaErrorNotReady) return std::nullopt;
  cuda_check(state, "asking whether the beside copies ended");
  return std::string("the ") + beside_name() + " copies beside the sample ended before it: not a bidirectional figure";
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
