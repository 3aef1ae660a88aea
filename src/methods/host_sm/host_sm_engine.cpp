// The host link driven by SMs instead of the copy engine: the LD/ST copy kernel of `ldst` reading
// (h2d_sm) or writing (d2h_sm) pinned host memory through its device mapping, as nvbandwidth's
// host_to_device_memcpy_sm and device_to_host_memcpy_sm do. nvbandwidth's kernel is the same
// access pattern: thread t of the grid moves 16-byte elements t, t + threads, t + 2 x threads,
// ..., several loads in flight before their stores; its grid is one block of 512 threads per SM
// (numThreadPerBlock in its common.h), the defaults here for an H100/H200 (132 SMs).
// The case's orientation is r -> r: rank r measures its own GPU's link.
#include <memory>

#include "engines/engine_registry.hpp"
#include "engines/host_link_engine.hpp"
#include "engines/sm_engines.hpp"

namespace p2pbench {
namespace {

class HostSmEngine final : public HostLinkEnds {
 public:
  HostSmEngine(Kind kind, kernels::LdstShape shape, HostMemoryKind memory)
      : HostLinkEnds(kind, memory), shape_(shape) {}

  // The kernel (and the pattern's fill and check) address the host buffer through its device
  // mapping, which pageable memory lacks.
  std::optional<std::string> unsupported_reason(int device) const override {
    if (auto why = pageable_refusal("an SM kernel reaches host memory only")) return why;
    return kernels::ldst_unsupported_reason(shape_, device);
  }
  void prepare(int device, int, const std::vector<Flow>&) override { kernels::ldst_prepare(shape_, device); }
  void launch(const Transfer& t, cudaStream_t stream) override { kernels::ldst_copy(shape_, t.src, t.dst, t.bytes, stream); }
  std::optional<int> measure_sms_used(const Transfer& t, cudaStream_t stream) override {
    return count_sms_of_launch(shape_.blocks, stream,
                               [&](unsigned* smids) { kernels::ldst_copy(shape_, t.src, t.dst, t.bytes, stream, smids); });
  }

 private:
  kernels::LdstShape shape_;
};

std::vector<SweptAxis> host_sm_axes() {
  return {blocks_axis(132, "blocks of the copy kernel (132: one per SM of an H100/H200, as nvbandwidth)"),
          threads_axis(512, "threads per block (512: nvbandwidth's numThreadPerBlock)"),
          unroll_axis(4, "16-byte loads in flight per thread")};
}

MethodInfo host_sm_method(const char* name, const char* title, const char* color, int order, const char* help) {
  return MethodInfo{Method{}, name, MethodKind::kHostLink, {}, title, color, order, false, "", help, host_sm_axes()};
}

std::unique_ptr<TransferEngine> make_host_sm(HostSmEngine::Kind kind, const CaseSpec& c) {
  return std::make_unique<HostSmEngine>(kind, kernels::LdstShape{*c.blocks, *c.threads, *c.unroll},
                                        c.host_memory.value_or(HostMemoryKind::kPinned));
}

}  // namespace

P2PBENCH_REGISTER_METHOD(kH2dSm,
                         host_sm_method("h2d_sm", "host→device (SM kernel)", "tab:brown", 70,
                                        "the LD/ST copy kernel reading pinned host memory into the rank's own GPU "
                                        "(nvbandwidth's host_to_device_memcpy_sm)"),
                         [](const CaseSpec& c) { return make_host_sm(HostSmEngine::kHostToDevice, c); });
P2PBENCH_REGISTER_METHOD(kD2hSm,
                         host_sm_method("d2h_sm", "device→host (SM kernel)", "tab:pink", 71,
                                        "the LD/ST copy kernel writing the rank's own GPU's data into pinned host "
                                        "memory (nvbandwidth's device_to_host_memcpy_sm)"),
                         [](const CaseSpec& c) { return make_host_sm(HostSmEngine::kDeviceToHost, c); });

}  // namespace p2pbench
