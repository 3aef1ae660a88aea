// Remote atomics: the source GPU's threads add into the peer's memory (push). GB/s counts the
// bytes the operations add into; verification checks the exact totals after each sample.
#pragma once

#include "engines/transfer_engine.hpp"
#include "kernels/atomic_kernels.hpp"

namespace p2pbench {

// The kernel shape of an atomic case (type, pattern, blocks, threads, ops, hot addresses).
kernels::AtomicShape atomic_shape_of(const CaseSpec& c);

class AtomicEngine final : public TransferEngine {
 public:
  explicit AtomicEngine(kernels::AtomicShape shape) : shape_(shape) {}
  std::optional<std::string> unsupported_reason(int device) const override {
    return kernels::atomic_unsupported_reason(shape_, device);
  }
  void prepare(int, int, const std::vector<Flow>&) override { kernels::atomic_prepare(shape_); }
  bool rotates_buffers() const override { return false; }
  // Launches alternate + and - by their place in the sample (see kernels/atomic_kernels.hpp):
  // an odd count leaves a nonzero total to check. The sign is the transfer's index, never a
  // count kept here: a sample is captured more than once (its graph, then the per-transfer
  // timing one), and a count carried from one capture into the next flipped every sign of the
  // second, whose check then failed on every element.
  uint64_t usable_iterations(uint64_t wanted) const override { return wanted | 1u; }
  void set_iterations(uint64_t n) override { iterations_ = n; }
  void fill_source(void*, size_t, uint64_t, cudaStream_t) override {}  // atomics read no source
  void poison_destination(void* region, size_t, uint64_t, cudaStream_t stream) override {
    kernels::atomic_reset(region, shape_, stream);
  }
  void launch(const Transfer& t, cudaStream_t stream) override {
    kernels::enqueue_atomics(shape_, t.dst, (t.index & 1u) != 0, stream);
  }
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }
  std::optional<std::string> verify(const void* dst, size_t, uint64_t, uint64_t, cudaStream_t stream) override {
    return kernels::atomic_verify(shape_, dst, iterations_, stream);
  }

 private:
  kernels::AtomicShape shape_;
  uint64_t iterations_ = 0;
};

}  // namespace p2pbench
