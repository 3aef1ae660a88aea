// The put_signal engine: one protocol (put_signal_protocol.hpp), three senders. The tokens
// methods (methods/tokens) are put_signal flows whose chunks are tokens, so they derive from it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/bounded_copier.hpp"
#include "engines/transfer_engine.hpp"
#include "methods/put_signal/put_signal_kernels.hpp"

namespace p2pbench::put_signal {

enum class Sender { kLdst, kTma, kCe };

class PutSignalEngine : public TransferEngine {
 public:
  PutSignalEngine(Sender sender, const CaseSpec& c);

  std::optional<std::string> unsupported_reason(int device) const override;
  bool two_sided() const override { return true; }
  bool rotates_buffers() const override { return false; }
  void prepare(int device, int rank, const std::vector<Flow>& mine) override;
  // The sender writes the receiver's buffer through its mapping; the receiver polls its own.
  Transfer transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const override;
  void before_sample(const Endpoints& e, uint64_t source_seed, cudaStream_t stream) override;
  void launch(const Transfer& t, cudaStream_t stream) override;
  // The copy-engine sender's commands per transfer (the receiver and the SM senders: one kernel).
  uint64_t queued_commands() const override;
  // Batched copies (copy_batch 1) cannot be captured in a CUDA graph: those transfers are queued.
  Feeding feeding() const override { return ce_signals_.batched ? Feeding::kQueued : Feeding::kCaptured; }
  // The sender's SMs (the receiver's thread per channel is not counted): its blocks, or none.
  std::optional<int> measure_sms_used(const Transfer& t, cudaStream_t) override;
  // A wait of this rank's end of a flow that gave up in the last sample (the kernels' headers).
  std::optional<std::string> stalled() override;
  // Every byte against the pattern, after what the receiver saw as the chunks arrived.
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;

 protected:
  // What one flow carries: its bytes and, where its chunks are gathered from the source, the
  // device array of their source chunks (Side::gather). Default: the case's bytes, contiguous.
  struct FlowShape {
    uint64_t bytes = 0;
    const uint32_t* gather = nullptr;
  };
  virtual FlowShape flow_shape(const Flow&) const { return {g_.bytes, nullptr}; }
  // The chunks the receiver of the flow whose buffer is `dst` found incomplete at their signal, or nullopt.
  std::optional<std::string> spot_check_failures(const void* dst);
  // The flow this rank receives into `dst` and the seed its source held (as before_sample saw them).
  struct Received {
    Flow flow;
    uint64_t seed = 0;
  };
  Received received_at(const void* dst) const;
  bool sends(const Flow& f) const { return f.src_rank == rank_; }
  const CaseSpec& spec() const { return c_; }
  int rank() const { return rank_; }
  bool bf16_tokens_ = false;  // Side::bf16_tokens of every flow

 private:
  RegionHeader header_of(const void* region);
  char* region(void* area, const Flow& flow, int rank) const;
  Side side(const Transfer& t) const;

  Sender sender_;
  CaseSpec c_;
  Geometry g_;
  int rank_ = -1;
  const uint64_t* heartbeat_ = nullptr;  // the case group's (before_sample)
  std::unique_ptr<CopyEngineSender> ce_;
  CeSignals ce_signals_;  // the copy engine's (signal_group, signal_copy, copy_batch)
  // This rank's regions (as before_sample reset them): whose end of which flow.
  struct End {
    Flow flow;
    bool receives = false;
    const void* dst = nullptr;  // the received flow's buffer (verify's argument)
    uint64_t seed = 0;          // the pattern of the flow's source
  };
  std::map<const void*, End> regions_;
  BoundedCopier header_reader_;
};

// Longest a wait of either end lasts before the case is declared broken (as the staged baseline:
// both ends start at the gate; calibration and warm-up are ungated).
constexpr double kTimeoutS = 15.0;

// The put_signal axes, each with a method's default and help (the tokens methods reuse them).
SweptAxis chunk_axis(uint64_t default_bytes, const char* help);
SweptAxis in_flight_axis();
SweptAxis warps_axis();
SweptAxis tma_smem_axis();

// The registry entry of a put_signal-like method (sanitizer exclusion, push only, both ends running).
MethodInfo put_signal_info(const char* name, const char* title, const char* color, int order, const char* help,
                           std::vector<SweptAxis> swept);

}  // namespace p2pbench::put_signal
