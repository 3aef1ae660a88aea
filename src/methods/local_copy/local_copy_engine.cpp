// Copies within a rank's own GPU, from its source buffer to its destination buffer: what one GPU
// can measure without a peer (configs/one-gpu.json), and the HBM ceiling a P2P figure sits below.
//   d2d       the copy engine (cudaMemcpyAsync within the GPU: nvbandwidth's device_local_copy)
//   d2d_ldst  the LD/ST copy kernel of `ldst` on the local buffers (an SM-driven HBM stream:
//             every byte read once and written once)
// Bandwidth counts the bytes copied, as nvbandwidth does; HBM moves twice that (read + write).
#include <algorithm>
#include <memory>

#include "common/cuda_check.hpp"
#include "engines/engine_registry.hpp"
#include "engines/sm_engines.hpp"

namespace p2pbench {
namespace {

class LocalCopyEngine final : public TransferEngine {
 public:
  static constexpr size_t kPieceBytes = size_t(256) << 20;

  std::optional<std::string> unsupported_reason(int) const override { return std::nullopt; }
  void prepare(int, int, const std::vector<Flow>&) override {}
  // The case's orientation is r -> r: both ends are this rank's own buffers.
  Transfer transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const override {
    return local_transfer(e, offset, bytes);
  }
  // In pieces of at most 256 MiB: the case loop replays its copies as a CUDA graph, and on an H200
  // a graph's memcpy node of 512 MiB or more within one GPU ran at 1354-1357 GB/s where the same
  // copy on a stream, or graph nodes of 256 MiB, ran at 2093-2122 (results/h200/one-gpu-2026-11-28/).
  void launch(const Transfer& t, cudaStream_t stream) override {
    const auto* src = static_cast<const char*>(t.src);
    auto* dst = static_cast<char*>(t.dst);
    for (size_t done = 0; done < t.bytes; done += kPieceBytes)
      cuda_check(cudaMemcpyAsync(dst + done, src + done, std::min(kPieceBytes, t.bytes - done), cudaMemcpyDefault, stream),
                 "enqueuing a copy within the GPU");
  }
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }
};

MethodInfo local_method(const char* name, const char* title, const char* color, int order, const char* help,
                        std::vector<SweptAxis> swept = {}) {
  MethodInfo m{Method{}, name, MethodKind::kLocal, {}, title, color, order, false, "", help, std::move(swept)};
  m.push_only = true;
  m.copies_within_gpu = true;
  return m;
}

std::vector<SweptAxis> ldst_axes() {
  return {blocks_axis(132, "blocks of the copy kernel (132: one per SM of an H100/H200)"),
          threads_axis(1024, "threads per block"), unroll_axis(4, "16-byte loads in flight per thread")};
}

}  // namespace

P2PBENCH_REGISTER_METHOD(kD2d,
                         local_method("d2d", "local copy (copy engine)", "tab:olive", 50,
                                      "the copy engine within the rank's own GPU, source buffer to destination "
                                      "buffer (nvbandwidth's device_local_copy); no peer needed"),
                         [](const CaseSpec&) -> std::unique_ptr<TransferEngine> {
                           return std::make_unique<LocalCopyEngine>();
                         });
P2PBENCH_REGISTER_METHOD(kD2dLdst,
                         local_method("d2d_ldst", "local copy (LD/ST kernel)", "tab:cyan", 51,
                                      "the LD/ST copy kernel within the rank's own GPU (an HBM stream: each byte "
                                      "read and written once); no peer needed",
                                      ldst_axes()),
                         [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
                           return std::make_unique<LdstEngine>(kernels::LdstShape{*c.blocks, *c.threads, *c.unroll}, /*within_gpu=*/true);
                         });

}  // namespace p2pbench
