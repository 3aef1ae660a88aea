// The host link of one GPU: the copy engine between host memory and the GPU (h2d, d2h), from
// a host buffer of the case's kind and NUMA placement (device/host_memory.hpp).
// The case's orientation is r -> r: rank r measures its own GPU's link.
#pragma once

#include <memory>

#include "common/cuda_raii.hpp"
#include "engines/transfer_engine.hpp"

namespace p2pbench {

// What every engine of one GPU's host link shares (copy engine, SM kernels, both ways): the
// host buffer, of the case's memory kind, is the source (host to device) or the destination
// (device to host).
class HostLinkEnds : public TransferEngine {
 public:
  enum Kind { kHostToDevice, kDeviceToHost };
  HostLinkEnds(Kind kind, HostMemoryKind memory) : kind_(kind), memory_(memory) {}
  bool needs_host_buffer() const override { return true; }
  void* source_region(const Endpoints& e) const override { return kind_ == kHostToDevice ? e.host : e.local_src; }
  void* destination_region(const Endpoints& e) const override { return kind_ == kHostToDevice ? e.local_dst : e.host; }
  Transfer transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const override {
    return {static_cast<const char*>(source_region(e)) + offset, static_cast<char*>(destination_region(e)) + offset,
            bytes, e.flow};
  }

 protected:
  // The copy engine's transfer (h2d, d2h, and the timed direction of both ways at once).
  void copy(const Transfer& t, cudaStream_t stream) const;
  // Why the engine cannot use pageable memory, whose buffer has no device mapping: `user` (what
  // needs one) + the reason; nullopt for every other kind.
  std::optional<std::string> pageable_refusal(const std::string& user) const;

  Kind kind_;
  HostMemoryKind memory_;
};

class HostLinkEngine final : public HostLinkEnds {
 public:
  HostLinkEngine(Kind kind, HostMemoryKind memory, NumaPlacement numa) : HostLinkEnds(kind, memory), numa_(numa) {}
  // The case's host memory kind and placement (what the group's buffer must be).
  HostMemoryKind host_memory() const { return memory_; }
  NumaPlacement host_numa() const { return numa_; }

  // A placement the host lacks is the case loop's skip (every engine with a host buffer).
  std::optional<std::string> unsupported_reason(int) const override { return std::nullopt; }
  void prepare(int, int, const std::vector<Flow>&) override {}
  void launch(const Transfer& t, cudaStream_t stream) override { copy(t, stream); }
  // A copy from or to pageable memory blocks the host thread and cannot be captured into a
  // graph (the case loop then times direct launches; TransferTimer says how).
  Feeding feeding() const override {
    return memory_ == HostMemoryKind::kPageable ? Feeding::kHostDriven : Feeding::kCaptured;
  }
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }
  // Pageable memory is out of the kernels' reach: its pattern, poison and check go through a
  // device staging buffer, chunk by chunk.
  void fill_source(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) override;
  void poison_destination(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) override;
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;

 private:
  // Whether the host side of the copy (h2d: the source, d2h: the destination) is pageable.
  bool host_source_pageable() const { return memory_ == HostMemoryKind::kPageable && kind_ == kHostToDevice; }
  bool host_destination_pageable() const { return memory_ == HostMemoryKind::kPageable && kind_ == kDeviceToHost; }
  // Writes `bytes` of host memory at `region` chunk by chunk: `make(chunk, n, offset)` fills the
  // staging buffer, which is then copied to region + offset.
  void write_through_staging(void* region, size_t bytes, cudaStream_t stream,
                             const std::function<void(void*, size_t, uint64_t)>& make);
  void* staging(size_t bytes);

  NumaPlacement numa_;
  DeviceBuffer staging_;  // pageable only, made on first use
};

}  // namespace p2pbench
