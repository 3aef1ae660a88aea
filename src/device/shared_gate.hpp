// The start gate: one word of POSIX shared memory that every rank on the node maps and
// registers with its GPU. Spin kernels on every active stream wait on it, so one host store
// releases all GPUs at once. Its life cycle (private name, room reserved, name removed once every
// rank holds it, registration) is SharedHostMemory's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/host_heartbeat.hpp"
#include "engines/shared_host_memory.hpp"

namespace p2pbench {

class SharedGate {
 public:
  // Creates a new object (O_EXCL, mode 0600) under a name no other job uses.
  static SharedGate create();
  // Opens the object another rank created.
  static SharedGate open(const std::string& name);

  const std::string& name() const { return memory_.name(); }
  // Removes the name once every rank has opened it: the mapping lives on, and nothing is left
  // behind in /dev/shm however the job ends.
  void unlink() { memory_.unlink(); }

  // Registers the mapping with the current device, and starts this process's heartbeat; kernels
  // poll device_word() and count their timeout while heartbeat_word() moves.
  void register_with_device() {
    memory_.register_with_device();
    heartbeat_ = std::make_unique<HostHeartbeat>();
  }
  const uint32_t* device_word() const { return static_cast<const uint32_t*>(memory_.device()); }
  const uint64_t* heartbeat_word() const { return heartbeat_ ? heartbeat_->device_word() : nullptr; }

  // The ticket of the next sample: every rank calls this once per gated sample, in the same
  // order, so the ranks agree on it without talking.
  uint32_t next_ticket() { return ++issued_; }
  // Host side: releases every kernel waiting for a ticket <= `ticket`, where this rank opens
  // the gate (its creator: the lowest rank of the node); elsewhere nothing.
  void release(uint32_t ticket);
  // The ticket last released (host view).
  uint32_t current() const;

 private:
  explicit SharedGate(SharedHostMemory memory) : memory_(std::move(memory)) {}
  uint32_t* word() const { return static_cast<uint32_t*>(memory_.host()); }

  SharedHostMemory memory_;
  std::unique_ptr<HostHeartbeat> heartbeat_;
  uint32_t issued_ = 0;
  bool releaser_ = false;
};

// Opens the gate for `ticket` however the step that queued behind it ends (an exception, a stop
// request, a lost peer): a GPU that did queue must never spin until its timeout. now() opens
// it early; ticket 0 is a no-op.
class GateRelease {
 public:
  GateRelease(SharedGate& gate, uint32_t ticket) : gate_(gate), ticket_(ticket) {}
  GateRelease(const GateRelease&) = delete;
  GateRelease& operator=(const GateRelease&) = delete;
  ~GateRelease() { now(); }
  void now() {
    if (ticket_ != 0) gate_.release(ticket_);
  }

 private:
  SharedGate& gate_;
  uint32_t ticket_;
};

}  // namespace p2pbench
