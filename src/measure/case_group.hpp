// Who takes part in a case, as one process sees it. The case loop (case_loop.hpp) is written
// against this interface only, so one loop serves both front ends:
//   - the MPI driver: one member per process (its rank), steps exchanged between ranks with
//     deadlines (RankGroup, rank_group.hpp);
//   - p2pbench-gbench: one process, every member a GPU of it, steps run locally
//     (gbench/two_gpu_session.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "device/host_memory.hpp"
#include "engines/transfer_engine.hpp"
#include "measure/step_report.hpp"
#include "measure/transfer_timer.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

class CaseGroup {
 public:
  virtual ~CaseGroup() = default;

  // Members of the group (ranks), and those this process runs.
  virtual int size() const = 0;
  virtual const std::vector<int>& local_members() const = 0;
  // Makes the member's GPU current (kernels, graphs and events follow it).
  virtual void use(int member) const = 0;
  virtual int device(int member) const = 0;
  // The member's GPU identity (UUID), for every member: lanes on one GPU share its timer.
  virtual std::string gpu_of(int member) const = 0;

  // Why `flow` has no memory path (IPC mapping, peer access), or nullopt.
  virtual std::optional<std::string> no_path_reason(const Flow& flow) const = 0;
  // What `member` (one end of `flow`) reaches for it; `dst_slot` picks the destination's slot.
  // `host` adds a host buffer of that kind, placement and size (made once and kept while the
  // cases ask for the same one).
  virtual Endpoints endpoints(int member, const Flow& flow, int dst_slot, const std::optional<HostBufferRequest>& host) = 0;
  // The slot size of the destination buffers (each holds destination_slots() of them).
  virtual size_t slot_bytes() const = 0;
  virtual int destination_slots() const = 0;

  // Lane `lane` of `member`: its own stream, graph, events and timer stamps (kept across cases).
  virtual TransferTimer& timer(int member, size_t lane) = 0;

  // Runs `local` for every local member (errors captured into its report), then returns every
  // member's report, indexed by member. Bounded: `local_work_s` for the local part (before
  // scaling). The MPI group may throw PeerLost or StopRequested.
  virtual std::vector<StepReport> step(const char* what, const std::function<void(int member, StepReport&)>& local,
                                       double local_work_s) = 0;

  // The start gate: spin kernels wait until the word reaches their ticket. Every member takes
  // the same tickets in the same order; release() opens what this process owns (always called
  // after queueing, also when queueing failed: a GPU that did queue must never spin out).
  virtual const uint32_t* gate_word(int member) const = 0;
  // The host heartbeat the gate's timeout counts with (common/host_heartbeat.hpp); nullptr: raw time.
  virtual const uint64_t* heartbeat_word() const = 0;
  virtual uint32_t next_ticket() = 0;
  virtual void release(uint32_t ticket) = 0;
};

}  // namespace p2pbench
