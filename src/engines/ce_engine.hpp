// Copy engine: cudaMemcpyAsync on the peer mapping (DMA, no SMs).
#pragma once

#include "engines/transfer_engine.hpp"

namespace p2pbench {

class CopyEngine final : public TransferEngine {
 public:
  std::optional<std::string> unsupported_reason(int) const override { return std::nullopt; }
  void prepare(int, int, const std::vector<Flow>&) override {}
  void launch(const Transfer& t, cudaStream_t stream) override;
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }
};

}  // namespace p2pbench
