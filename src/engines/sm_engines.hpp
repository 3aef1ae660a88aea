// SM-driven engines: the LD/ST and TMA copy kernels behind the engine interface.
#pragma once

#include <functional>

#include "engines/transfer_engine.hpp"
#include "kernels/copy_kernels.hpp"

namespace p2pbench {

// Counts the distinct SMs the blocks of one launch ran on (%smid written per block).
int count_sms_of_launch(int blocks, cudaStream_t stream, const std::function<void(unsigned*)>& launch_with_smids);

class LdstEngine final : public TransferEngine {
 public:
  explicit LdstEngine(kernels::LdstShape shape) : shape_(shape) {}
  std::optional<std::string> unsupported_reason(int device) const override {
    return kernels::ldst_unsupported_reason(shape_, device);
  }
  void prepare(int device, int, const std::vector<Flow>&) override { kernels::ldst_prepare(shape_, device); }
  void launch(const Transfer& t, cudaStream_t stream) override {
    kernels::ldst_copy(shape_, t.src, t.dst, t.bytes, stream);
  }
  std::optional<int> measure_sms_used(const Transfer& t, cudaStream_t stream) override {
    return count_sms_of_launch(shape_.blocks, stream,
                               [&](unsigned* smids) { kernels::ldst_copy(shape_, t.src, t.dst, t.bytes, stream, smids); });
  }

 private:
  kernels::LdstShape shape_;
};

class TmaEngine final : public TransferEngine {
 public:
  explicit TmaEngine(kernels::TmaShape shape) : shape_(shape) {}
  std::optional<std::string> unsupported_reason(int device) const override {
    return kernels::tma_unsupported_reason(shape_, device);
  }
  void prepare(int device, int, const std::vector<Flow>&) override { kernels::tma_prepare(shape_, device); }
  void launch(const Transfer& t, cudaStream_t stream) override {
    kernels::tma_copy(shape_, t.src, t.dst, t.bytes, stream);
  }
  std::optional<int> measure_sms_used(const Transfer& t, cudaStream_t stream) override {
    return count_sms_of_launch(shape_.blocks, stream,
                               [&](unsigned* smids) { kernels::tma_copy(shape_, t.src, t.dst, t.bytes, stream, smids); });
  }

 private:
  kernels::TmaShape shape_;
};

}  // namespace p2pbench
