// The MPI driver's side of the case loop: this process is one member (its rank); every step is
// a LockStep exchange with deadlines; the start gate is its node's (released by the node's
// lowest rank); memory paths are the IPC mappings of PeerBuffers.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "comm/communicator.hpp"
#include "common/cuda_raii.hpp"
#include "measure/case_group.hpp"
#include "measure/lock_step.hpp"
#include "device/peer_buffers.hpp"
#include "measure/runner_options.hpp"
#include "device/shared_gate.hpp"

namespace p2pbench {

class RankGroup final : public CaseGroup {
 public:
  RankGroup(const Communicator& comm, const RunnerOptions& options, const GroupLayout& layout, int device, SharedGate& gate,
            PeerBuffers& buffers);

  int size() const override { return comm_.size(); }
  const std::vector<int>& local_members() const override { return me_; }
  void use(int) const override {}  // the device was selected at set-up
  int device(int) const override { return device_; }
  std::string gpu_of(int member) const override { return layout_.gpu_of_rank.at(size_t(member)); }
  std::optional<std::string> no_path_reason(const Flow& flow) const override;
  Endpoints endpoints(int member, const Flow& flow, int dst_slot, const std::optional<HostBufferRequest>& host) override;
  size_t slot_bytes() const override { return buffers_.slot_bytes(); }
  int destination_slots() const override { return buffers_.destination_slots(); }
  TransferTimer& timer(int member, size_t lane) override;
  std::vector<StepReport> step(const char* what, const std::function<void(int member, StepReport&)>& local,
                               double local_work_s) override;
  const uint32_t* gate_word(int) const override { return gate_.device_word(); }
  const uint64_t* heartbeat_word() const override { return gate_.heartbeat_word(); }
  uint32_t next_ticket() override { return gate_.next_ticket(); }
  void release(uint32_t ticket) override { gate_.release(ticket); }

 private:
  const Communicator& comm_;
  LockStep steps_;
  RunnerOptions options_;
  std::vector<int> me_;
  GroupLayout layout_;
  int device_;
  SharedGate& gate_;
  PeerBuffers& buffers_;
  std::vector<std::unique_ptr<TransferTimer>> timers_;
  // The host-link cases' buffer, of the last kind asked for. One at a time: the sweep runs each
  // kind's cases together, so each is made once per method, and holding every kind would keep
  // several slots of host memory per rank pinned.
  std::unique_ptr<HostMemory> host_buffer_;
  std::optional<HostBufferRequest> host_request_;
};

}  // namespace p2pbench
