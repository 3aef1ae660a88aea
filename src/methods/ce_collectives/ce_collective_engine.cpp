// The copy-engine collectives: all-gather and all-to-all with no SM on any rank. Each rank, per
// operation, forks a stream per peer from the case's stream; on each it copies its chunk for the
// peer into the peer's output (cudaMemcpyAsync through the peer mapping: the copy engine), writes
// the peer's signal word for this rank behind the copy (cuStreamWriteValue32, whose memory barrier
// orders the chunk before it), waits for the peer's signal in its own signal area
// (cuStreamWaitValue32) and resets that word; the streams join the case's stream again. Separate
// streams let the copies to different peers run on different copy engines. The own chunk is in
// place before the operation (poison_destination says why). The waits' deadline: wait_guard.hpp. Beside
// all_gather_put and NCCL's all-gather and all-to-all: configs/ce-collectives.json.
//
// Why the words are reset rather than compared with an ever-growing epoch: a sample is a CUDA
// graph replayed as captured, its stream writes and waits holding the values of the capture, so
// a word's value cannot grow from one replay to the next. Each operation therefore uses one of
// two slots of words, the slot of its epoch (wait_guard.hpp), and leaves its slot at zero: a
// peer signals the next operation only after this rank's signal of it, which comes after this
// operation's resets, into the other slot; and the operation after that reuses this slot only
// once this rank has signalled it, after its own resets. Graphs of an even number of operations
// (usable_iterations) keep the slots alternating from one replay to the next.
#include <algorithm>
#include <cuda.h>  // the stream operations' flags
#include <cuda_runtime_api.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "engines/collective_engine.hpp"
#include "engines/engine_registry.hpp"
#include "kernels/collective_data.hpp"
#include "kernels/stream_value_ops.hpp"
#include "methods/ce_collectives/wait_guard.hpp"

namespace p2pbench::ce_collectives {
namespace {

// Longest a wait lasts before the guard releases it (as put_signal's and the barriers' timeouts).
constexpr double kWaitTimeoutS = 15.0;

class CeCollectiveEngine final : public CollectiveEngine {
 public:
  explicit CeCollectiveEngine(const CaseSpec& c) : CollectiveEngine(c) {
    if (op() != Collective::kAllGather && op() != Collective::kAllToAll)
      throw std::logic_error(std::string(to_string(c.method)) + " is registered with an operation the copy engine lacks");
  }

  std::optional<std::string> unsupported_reason(int device) const override {
    if (auto why = CollectiveEngine::unsupported_reason(device)) return why;
    try {
      kernels::require_stream_value_ops();
    } catch (const std::exception& e) {
      return std::string("the copy-engine collectives signal and wait with the driver's stream memory operations: ") +
             e.what();
    }
    return std::nullopt;
  }

  void prepare(int device, int rank, const std::vector<Flow>& mine) override {
    CollectiveEngine::prepare(device, rank, mine);
    if (!guard_) guard_ = std::make_unique<WaitGuard>(device, ranks(), me(), kWaitTimeoutS);
    if (!fork_) fork_ = make_untimed_event("forking a copy-engine collective's streams");
    while (peers_.size() < ranks().size()) {
      peers_.push_back(make_stream("a copy-engine collective's stream to one peer"));
      joins_.push_back(make_untimed_event("joining a copy-engine collective's streams"));
    }
  }

  // Also before the first launch, while nothing of the case runs (the case loop's steps).
  void before_sample(const Endpoints& e, uint64_t source_seed, cudaStream_t stream) override {
    CollectiveEngine::before_sample(e, source_seed, stream);
    cuda_check(cudaMemsetAsync(e.local_signal_area, 0, kSignalWordsBytes, stream),
               "resetting the copy-engine collective's signal words");
    epoch_ = 0;
  }

  // The output poisoned (once a sample: every incoming flow names it), then the rank's own chunk
  // put in its place: the operation is in place for that chunk (as an in-place all-gather), since
  // a copy within one GPU waits for a free SM (tests/kernels/test_sm_holder: cudaMemcpyAsync and a
  // batch copy preferring overlap alike). Outside the timing.
  void poison_destination(void* region, size_t, uint64_t, cudaStream_t stream) override {
    if (!first_poison_of_sample()) return;
    kernels::poison_collective_output(region, output_bytes(), stream, element());
    void* base = static_cast<char*>(region) - output_offset();
    cuda_check(cudaMemcpyAsync(my_slot(base), input_chunk(base, me()), chunk_bytes(), cudaMemcpyDeviceToDevice, stream),
               "placing a copy-engine collective's own chunk in its output");
  }

  // Even, so that a replayed graph's operations keep alternating their slots of signal words.
  uint64_t usable_iterations(uint64_t wanted) const override { return wanted + wanted % 2; }
  // The most one operation queues on any one stream: a peer's stream takes the fork's wait, the
  // copy, the signal, the wait for the peer's, its reset, the note of its arrival and the join's
  // record (7); the case's stream two writes, the fork and a join per peer (more from 6 ranks on).
  uint64_t queued_commands() const override { return std::max<uint64_t>(7, 3 + (ranks().size() - 1)); }

  void launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) override;

  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return 0; }
  std::optional<std::string> stalled() override { return guard_ ? guard_->stalled() : std::nullopt; }

 private:
  uint64_t chunk_bytes() const { return size().chunk_elements * element_bytes(element()); }
  // Chunk r of the input in `base` (a rank's source buffer: input at 0; all-gather: its only chunk).
  const char* input_chunk(const void* base, int r) const {
    return static_cast<const char*>(base) + (op() == Collective::kAllToAll ? uint64_t(r) * chunk_bytes() : 0);
  }
  // Where this rank's chunk lands in the output of the rank whose source buffer is `base`: chunk me.
  char* my_slot(void* base) const { return static_cast<char*>(output_of(base)) + uint64_t(me()) * chunk_bytes(); }
  void exchange_with(const Addresses& a, int peer, uint32_t epoch, cudaStream_t s) const;

  std::unique_ptr<WaitGuard> guard_;
  std::vector<Stream> peers_;  // by rank index (this rank's own unused)
  std::vector<Event> joins_;
  Event fork_;
  uint32_t epoch_ = 0;  // of the last operation launched since the words' reset
};

void CeCollectiveEngine::launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) {
  if (!guard_) throw RuntimeFailure(std::string(to_string(spec().method)) + " was launched before prepare()");
  const Addresses a = addresses_of(transfers);
  const uint32_t epoch = ++epoch_;
  guard_->watch(a.signal[me()]);
  Progress* progress = guard_->device_progress();
  kernels::stream_write_value(stream, &progress->begun, epoch, CU_STREAM_WRITE_VALUE_DEFAULT,
                              "queueing the start of a copy-engine collective");
  cuda_check(cudaEventRecord(fork_.get(), stream), "forking a copy-engine collective's streams");
  for (int p = 0; p < int(ranks().size()); ++p) {
    if (p == me()) continue;
    const cudaStream_t s = peers_[size_t(p)].get();
    cuda_check(cudaStreamWaitEvent(s, fork_.get(), 0), "starting a copy-engine collective's stream to a peer");
    exchange_with(a, p, epoch, s);
    cuda_check(cudaEventRecord(joins_[size_t(p)].get(), s), "ending a copy-engine collective's stream to a peer");
  }
  for (int p = 0; p < int(ranks().size()); ++p)
    if (p != me())
      cuda_check(cudaStreamWaitEvent(stream, joins_[size_t(p)].get(), 0), "joining a copy-engine collective's streams");
  kernels::stream_write_value(stream, &progress->ended, epoch, CU_STREAM_WRITE_VALUE_DEFAULT,
                              "queueing the end of a copy-engine collective");
}

// On `s`: the chunk to `peer`, its signal, then the wait for the peer's signal and its reset.
void CeCollectiveEngine::exchange_with(const Addresses& a, int peer, uint32_t epoch, cudaStream_t s) const {
  cuda_check(cudaMemcpyAsync(my_slot(a.base[peer]), input_chunk(a.base[me()], peer), chunk_bytes(), cudaMemcpyDeviceToDevice, s),
             "queueing a copy-engine collective's chunk to a peer");
  kernels::stream_write_value(s, signal_word(a.signal[peer], epoch, me()), 1, CU_STREAM_WRITE_VALUE_DEFAULT,
                              "queueing a copy-engine collective's signal to a peer");
  uint32_t* mine = signal_word(a.signal[me()], epoch, peer);
  kernels::stream_wait_value(s, mine, 1, CU_STREAM_WAIT_VALUE_EQ, "queueing a copy-engine collective's wait for a peer");
  kernels::stream_write_value(s, mine, 0, CU_STREAM_WRITE_VALUE_DEFAULT, "queueing the reset of a peer's signal");
  kernels::stream_write_value(s, &guard_->device_progress()->arrived[peer], epoch,
                              CU_STREAM_WRITE_VALUE_DEFAULT, "queueing the note of a peer's signal");
}

MethodInfo info(const char* name, const char* title, const char* color, int order, Collective op, const char* help) {
  MethodInfo m = collective_method_info(name, title, color, order, op, help, {});
  m.sanitizer_skip = "its streams wait for signals their peers' streams write";
  return m;
}

std::unique_ptr<TransferEngine> make(const CaseSpec& c) { return std::make_unique<CeCollectiveEngine>(c); }

}  // namespace

// Both may be the transfer beside an interference workload: no SM on either rank.
P2PBENCH_REGISTER_METHOD(kAllGatherCe,
                         beside_workload(info("all_gather_ce", "all-gather: copy engine", "tab:blue", 29, Collective::kAllGather,
                              "all-gather of f32 with no SM: each rank's chunk copied by the copy engine into every "
                              "rank's output, a stream per peer, a stream-written signal behind each copy")),
                         make);
P2PBENCH_REGISTER_METHOD(kAllToAllCe,
                         beside_workload(info("all_to_all_ce", "all-to-all: copy engine", "tab:green", 34, Collective::kAllToAll,
                              "all-to-all of f32 with no SM: each rank's chunk r copied by the copy engine into chunk "
                              "me of rank r's output, a stream per peer, a stream-written signal behind each copy")),
                         make);

}  // namespace p2pbench::ce_collectives
