// One process owning two GPUs: slot 0 is --src, slot 1 is --dst, and both are members of the
// case loop's group (CaseGroup): steps run locally, one after the other. Peer access both ways,
// a source and a destination buffer on each GPU, TransferTimers (streams) per GPU, and the start
// gate (a word of mapped pinned host memory that every GPU polls). Nothing here touches CUDA
// before open(), so that benchmarks can be registered and listed without a GPU.
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
#include "measure/case_group.hpp"
#include "device/gpu_device.hpp"
#include "measure/runner_options.hpp"
#include "measure/transfer_timer.hpp"

namespace p2pbench::gbench {

class TwoGpuSession final : public CaseGroup {
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
    std::vector<std::unique_ptr<TransferTimer>> timers;  // by lane; lane 0 also fills, poisons, verifies
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
  // Grows every buffer to at least `bytes` (never shrinks; contents are not kept).
  void ensure_buffers(uint64_t bytes);

  // The case loop's group: the two GPUs, every step run here in turn.
  int size() const override { return 2; }
  const std::vector<int>& local_members() const override { return members_; }
  void use(int slot) const override;
  int device(int slot) const override { return gpus_[slot].device; }
  std::string gpu_of(int slot) const override { return gpus_[slot].info.uuid; }
  std::optional<std::string> no_path_reason(const Flow&) const override { return std::nullopt; }  // open() checked
  // A transfer driven from a GPU reaches its own buffers and the other GPU's directly (peer
  // access), where the MPI driver has IPC mappings. One destination slot: at most one flow
  // arrives at a GPU (uni or bidir).
  Endpoints endpoints(int slot, const Flow& flow, int dst_slot, const std::optional<HostBufferRequest>& host) override;
  size_t slot_bytes() const override { return capacity_; }
  int destination_slots() const override { return 1; }
  TransferTimer& timer(int slot, size_t lane) override;
  std::vector<StepReport> step(const char* what, const std::function<void(int, StepReport&)>& local,
                               double local_work_s) override;
  const uint32_t* gate_word(int) const override { return static_cast<const uint32_t*>(gate_.device()); }
  // One process drives both GPUs: nothing to pause the job's host apart from the GPUs.
  const uint64_t* heartbeat_word() const override { return nullptr; }
  uint32_t next_ticket() override { return ++ticket_; }
  void release(uint32_t ticket) override;
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
  std::vector<int> members_{0, 1};
  uint64_t capacity_ = 0;
  MappedHostBuffer gate_;
  uint32_t ticket_ = 0;
  std::map<std::string, uint64_t> calibrated_;
  uint64_t seed_counter_ = 0;
  std::vector<std::string> failures_;
  std::optional<std::string> unusable_;
};

}  // namespace p2pbench::gbench
