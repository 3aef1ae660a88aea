// The start gate: one word of POSIX shared memory that every rank on the node maps and
// registers with its GPU. Spin kernels on every active stream wait on it, so one host store
// releases all GPUs at once. Its life cycle (private name, room reserved, name removed once every
// rank holds it, registration) is SharedHostMemory's.
#pragma once

#include <cstdint>
#include <string>

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

  // Registers the mapping with the current device; kernels poll device_word().
  void register_with_device() { memory_.register_with_device(); }
  const uint32_t* device_word() const { return static_cast<const uint32_t*>(memory_.device()); }

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
  uint32_t issued_ = 0;
  bool releaser_ = false;
};

}  // namespace p2pbench
