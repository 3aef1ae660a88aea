// The host link of one GPU: the copy engine between pinned host memory and the GPU (h2d, d2h).
// The case's orientation is r -> r: rank r measures its own GPU's link.
#pragma once

#include "engines/transfer_engine.hpp"

namespace p2pbench {

class HostLinkEngine final : public TransferEngine {
 public:
  enum Kind { kHostToDevice, kDeviceToHost };
  explicit HostLinkEngine(Kind kind) : kind_(kind) {}
  std::optional<std::string> unsupported_reason(int) const override { return std::nullopt; }
  void prepare(int, int, const std::vector<Flow>&) override {}
  bool needs_host_buffer() const override { return true; }
  Transfer transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const override;
  void* source_region(const Endpoints& e) const override { return kind_ == kHostToDevice ? e.host : e.local_src; }
  void* destination_region(const Endpoints& e) const override { return kind_ == kHostToDevice ? e.local_dst : e.host; }
  void launch(const Transfer& t, cudaStream_t stream) override;
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }

 private:
  Kind kind_;
};

}  // namespace p2pbench
