// One process owning two GPUs: slot 0 is --src, slot 1 is --dst. Peer access both ways, a
// source and a destination buffer on each GPU, one TransferTimer (stream) per GPU, and the
// start gate (a word of mapped pinned host memory that every GPU polls). Nothing here touches
// CUDA before open(), so that benchmarks can be registered and listed without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cuda_raii.hpp"
#include "engines/transfer_engine.hpp"
#include "measure/gpu_device.hpp"
#include "measure/runner_options.hpp"
#include "measure/transfer_timer.hpp"

namespace p2pbench::gbench {

class TwoGpuSession {
 public:
  struct Settings {
    std::string src_spec = "0";  // index, UUID or PCI bus id
    std::string dst_spec = "1";
    bool allow_same_device = false;
    RunnerOptions run;  // sample time, warm-up, verification, buffer pool, timeouts
  };

  struct Gpu {
    int device = -1;
    GpuInfo info;
    std::unique_ptr<TransferTimer> timer;  // its stream also fills, poisons and verifies
    DeviceBuffer src, dst;
  };

  explicit TwoGpuSession(Settings settings) : settings_(std::move(settings)) {}
  ~TwoGpuSession();
  TwoGpuSession(const TwoGpuSession&) = delete;
  TwoGpuSession& operator=(const TwoGpuSession&) = delete;

  // Selects the GPUs, enables peer access both ways, creates the gate and the timers. Throws
  // RuntimeFailure when no GPU or only one is visible or the pair has no peer access;
  // InputError when --src/--dst match no visible GPU or name one GPU twice; CudaError else.
  void open();
  bool is_open() const { return open_; }

  const RunnerOptions& options() const { return settings_.run; }
  bool same_device() const { return gpus_[0].device == gpus_[1].device; }
  Gpu& gpu(int slot) { return gpus_[slot]; }
  const Gpu& gpu(int slot) const { return gpus_[slot]; }
  // Makes the slot's GPU the current device (kernels, graphs and events follow it).
  void use(int slot) const;

  // Grows every buffer to at least `bytes` (never shrinks; contents are not kept).
  void ensure_buffers(uint64_t bytes);
  // What a transfer driven from `slot` reaches: its own buffers, and the other GPU's directly
  // (peer access), where the MPI driver has IPC mappings.
  Endpoints endpoints(int slot) const;

  // The start gate: spin kernels wait until *gate_word() >= their ticket.
  const uint32_t* gate_word() const { return static_cast<const uint32_t*>(gate_.device()); }
  uint32_t next_ticket() { return ++ticket_; }
  void release_gate(uint32_t ticket);
  // Transfers per sample of a case, fixed by its first calibration: Google Benchmark calls a
  // case several times (iteration estimate, repetitions) and its statistics need the same
  // batch size every time.
  uint64_t transfers_per_sample(const std::string& case_name, uint64_t calibrated) {
    return calibrated_.emplace(case_name, calibrated).first->second;
  }
  // A fresh pattern seed for every sample of the session.
  uint64_t next_seed() { return 0x9e3779b97f4a7c15ull * ++seed_counter_ ^ 0x5eed5eedull; }

  // What went wrong, for the exit status; after a fatal error no further case runs.
  void record_failure(const std::string& benchmark, const std::string& why, bool fatal);
  const std::vector<std::string>& failures() const { return failures_; }
  const std::optional<std::string>& unusable() const { return unusable_; }

 private:
  Settings settings_;
  bool open_ = false;
  Gpu gpus_[2];
  uint64_t capacity_ = 0;
  MappedHostBuffer gate_;
  uint32_t ticket_ = 0;
  std::map<std::string, uint64_t> calibrated_;
  uint64_t seed_counter_ = 0;
  std::vector<std::string> failures_;
  std::optional<std::string> unusable_;
};

}  // namespace p2pbench::gbench
