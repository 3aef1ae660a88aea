// SM-driven engines: the LD/ST and TMA copy kernels behind the engine interface. Both are one
// template, SmCopyEngine<Kernels>, over a traits type that names a kernel family's shape and
// its four host functions; the engines differ in nothing else.
#pragma once

#include <functional>

#include "engines/transfer_engine.hpp"
#include "kernels/copy_kernels.hpp"

namespace p2pbench {

// Counts the distinct SMs the blocks of one launch ran on (%smid written per block).
int count_sms_of_launch(int blocks, cudaStream_t stream, const std::function<void(unsigned*)>& launch_with_smids);

// A copy kernel family as SmCopyEngine uses it. `Kernels` provides:
//   using Shape = ...;  (with an int `blocks` member)
//   static std::optional<std::string> unsupported_reason(const Shape&, int device);
//   static void prepare(const Shape&, int device);
//   static void copy(const Shape&, const void* src, void* dst, size_t bytes, cudaStream_t, unsigned* block_smids);
template <typename Kernels>
class SmCopyEngine final : public TransferEngine {
 public:
  using Shape = typename Kernels::Shape;

  // `within_gpu`: from the rank's own source buffer to its own destination buffer (the local
  // copies, cases r -> r) instead of through the peer mapping.
  explicit SmCopyEngine(Shape shape, bool within_gpu = false) : shape_(shape), within_gpu_(within_gpu) {}
  Transfer transfer(Direction d, const Endpoints& e, uint64_t offset, size_t bytes) const override {
    return within_gpu_ ? local_transfer(e, offset, bytes) : TransferEngine::transfer(d, e, offset, bytes);
  }
  std::optional<std::string> unsupported_reason(int device) const override {
    return Kernels::unsupported_reason(shape_, device);
  }
  void prepare(int device, int, const std::vector<Flow>&) override { Kernels::prepare(shape_, device); }
  void launch(const Transfer& t, cudaStream_t stream) override {
    Kernels::copy(shape_, t.src, t.dst, t.bytes, stream, nullptr);
  }
  std::optional<int> measure_sms_used(const Transfer& t, cudaStream_t stream) override {
    return count_sms_of_launch(shape_.blocks, stream,
                               [&](unsigned* smids) { Kernels::copy(shape_, t.src, t.dst, t.bytes, stream, smids); });
  }

 private:
  Shape shape_;
  bool within_gpu_;
};

struct LdstKernels {
  using Shape = kernels::LdstShape;
  static std::optional<std::string> unsupported_reason(const Shape& s, int device) {
    return kernels::ldst_unsupported_reason(s, device);
  }
  static void prepare(const Shape& s, int device) { kernels::ldst_prepare(s, device); }
  static void copy(const Shape& s, const void* src, void* dst, size_t bytes, cudaStream_t stream, unsigned* smids) {
    kernels::ldst_copy(s, src, dst, bytes, stream, smids);
  }
};

struct TmaKernels {
  using Shape = kernels::TmaShape;
  static std::optional<std::string> unsupported_reason(const Shape& s, int device) {
    return kernels::tma_unsupported_reason(s, device);
  }
  static void prepare(const Shape& s, int device) { kernels::tma_prepare(s, device); }
  static void copy(const Shape& s, const void* src, void* dst, size_t bytes, cudaStream_t stream, unsigned* smids) {
    kernels::tma_copy(s, src, dst, bytes, stream, smids);
  }
};

using LdstEngine = SmCopyEngine<LdstKernels>;
using TmaEngine = SmCopyEngine<TmaKernels>;

}  // namespace p2pbench
