// POSIX shared memory that the ranks of one node map, optionally registered with the current
// GPU (pinned, device-mapped): one rank creates the object under a fresh private name, the
// others open it by that name, then the creator removes the name, so nothing is left in
// /dev/shm however the job ends. Generic: the staged baseline's staging area uses it, and the
// start gate can (it is a one-page object of the same life cycle).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/cuda_raii.hpp"

namespace p2pbench {

class SharedHostMemory {
 public:
  // Creates an object of `bytes` (rounded up to whole pages) named "/p2pbench-<pid>-<random>"
  // (O_CREAT | O_EXCL, mode 0600: private to this user). Its pages are allocated (fallocate,
  // so a full /dev/shm is an error here rather than a SIGBUS later) and zeroed by this
  // process: first touch, so they come from this process's NUMA node when it has been bound
  // near its GPU. `what` names the memory in error messages ("the staging area").
  static SharedHostMemory create(size_t bytes, const std::string& what);
  // Maps the object another rank created; throws if it is smaller than `bytes`.
  static SharedHostMemory open(const std::string& name, size_t bytes, const std::string& what);

  SharedHostMemory() = default;
  SharedHostMemory(SharedHostMemory&& other) noexcept;
  SharedHostMemory& operator=(SharedHostMemory&& other) noexcept;
  SharedHostMemory(const SharedHostMemory&) = delete;
  SharedHostMemory& operator=(const SharedHostMemory&) = delete;
  ~SharedHostMemory();  // unregisters, unmaps, and removes the name if it is still there

  const std::string& name() const { return name_; }
  size_t size() const { return bytes_; }
  void* host() const { return mapping_; }
  explicit operator bool() const { return mapping_ != nullptr; }

  // The creator removes the name once every rank has opened it (the mapping lives on).
  // No-op for the other ranks.
  void unlink();

  // Registers the mapping with the current device (pinned, mapped); device() is then the
  // address kernels and copies use.
  void register_with_device();
  void* device() const { return registration_.device(); }

  // Bytes an unprivileged process may still allocate on the filesystem behind POSIX shared
  // memory (statvfs f_bavail), or nullopt where it cannot be read.
  static std::optional<uint64_t> free_bytes(const char* directory = "/dev/shm");

 private:
  SharedHostMemory(std::string name, void* mapping, size_t bytes, bool owner, std::string what);
  void release() noexcept;

  std::string name_;
  std::string what_;
  void* mapping_ = nullptr;
  size_t bytes_ = 0;
  bool owner_ = false;
  bool unlinked_ = false;
  HostRegistration registration_;
};

// Why `needed` bytes of shared memory cannot be had when `free` bytes are left (nullopt: there
// is room, or the free space is unknown and creation will tell): "/dev/shm has 64 MiB free,
// staged needs 96 MiB: enlarge it (e.g. --shm-size for containers)".
std::optional<std::string> shm_space_problem(std::optional<uint64_t> free, uint64_t needed, const std::string& who,
                                             const char* directory = "/dev/shm");

}  // namespace p2pbench
