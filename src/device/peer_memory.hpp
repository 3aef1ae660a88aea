// How one rank's transfer buffers are allocated and how its node-local peers map them: the
// run's allocator (docs/allocators.md).
//   legacy  cudaMalloc, exported with cudaIpcGetMemHandle, mapped with cudaIpcOpenMemHandle
//   vmm     cuMemCreate (rounded up to the allocation granularity), exported as a POSIX file
//           descriptor that the peer takes from this process with pidfd_getfd, or, where the
//           kernel refuses that, receives over this process's socket (SCM_RIGHTS), then
//           imports, reserves, maps and makes accessible to the peer's device
//   fabric  the same with a fabric handle (plain bytes, no descriptor); needs an IMEX channel
// Handles cross ranks as bytes of a fixed size per allocator. Every driver function is fetched
// at run time, so the binaries start where libcuda is missing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "vocab/allocators.hpp"

namespace p2pbench {

// A failure of the vmm or fabric path that the run survives without peer mappings: a device or
// driver without the feature, no IMEX channel, a refused pidfd_getfd. The message names the
// call, its error and, where known, what would allow it.
class PeerMemoryUnavailable : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

// Device memory this process can use: its own allocation, or a peer's mapped here. Destroying
// it frees the own allocation or unmaps the peer's.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  void* get() const { return ptr_; }
  size_t size() const { return size_; }  // as asked for (the allocation may be larger)
  // Own memory: the bytes a peer maps it from (empty where it was not exported).
  const std::string& handle() const { return handle_; }

 protected:
  void* ptr_ = nullptr;
  size_t size_ = 0;
  std::string handle_;
};

// One allocator. Every handle it exports has handle_size() bytes.
class PeerMemory {
 public:
  virtual ~PeerMemory() = default;
  virtual Allocator kind() const = 0;
  virtual size_t handle_size() const = 0;
  // The allocation granularity that sizes are rounded up to (vmm, fabric), else 0.
  virtual size_t granularity() const { return 0; }
  // `bytes` of the current device; with `exported`, with the handle peers map it from.
  virtual std::unique_ptr<DeviceMemory> allocate(size_t bytes, const std::string& what, bool exported) const = 0;
  // A peer's memory, mapped here from the handle it exported.
  virtual std::unique_ptr<DeviceMemory> map_peer(const std::string& handle, const std::string& what) const = 0;
  // Every peer has mapped what it will: vmm stops serving its descriptors (a no-op elsewhere).
  virtual void stop_sharing() {}
};

// The allocator for `device` (the current device). vmm and fabric check the device's support
// first and throw PeerMemoryUnavailable saying what is missing.
std::unique_ptr<PeerMemory> make_peer_memory(Allocator allocator, int device);

// cudaMalloc memory with no handle: the own buffers where vmm or fabric could not allocate, so
// that the methods that need no peer still run.
std::unique_ptr<DeviceMemory> plain_device_memory(size_t bytes, const std::string& what);

// A copy, in this process, of descriptor `fd` of process `pid` (pidfd_open + pidfd_getfd); the
// caller closes it. PeerMemoryUnavailable saying what would allow it where the kernel refuses.
int take_descriptor(int32_t pid, int32_t fd, const std::string& doing);

// ---- The handles' bytes and the failure texts (no GPU needed; tested in tests/peer_memory).

// vmm: the exporting process and its descriptor's number there, which the peer takes with
// pidfd_getfd (both ranks in one PID namespace: a node, GroupLayout), the allocation's size,
// and the random id of the exporter's descriptor socket (descriptor_socket_name; 0: none), where
// the peer asks for it when pidfd_getfd is refused.
// 28 bytes: "vmm2", pid, fd (int32 each), size, socket id (uint64 each), little-endian.
struct FdHandle {
  int32_t pid = 0;
  int32_t fd = -1;
  uint64_t bytes = 0;
  uint64_t socket_id = 0;
};
constexpr size_t kFdHandleBytes = 28;
std::string pack_fd_handle(const FdHandle& h);
FdHandle unpack_fd_handle(const std::string& bytes);  // RuntimeFailure on a wrong size or tag

// take_descriptor of the handle's descriptor or, where the kernel refuses pidfd_getfd for want
// of ptrace access (EPERM, EACCES) or lacks it (ENOSYS), the same asked of the exporter's
// descriptor socket (SCM_RIGHTS). A refusal that a socket cannot mend (a descriptor not open, a
// process gone) is reported as it is; where both fail the message gives both reasons.
int take_or_receive_descriptor(const FdHandle& handle, const std::string& doing);
// How long an importer waits for the exporter's socket to answer, seconds.
constexpr double kDescriptorSocketDeadlineS = 10.0;
// Whether pidfd_getfd's errno `err` is one the socket can get around.
bool socket_can_replace_pidfd(int err);

// fabric: the driver's CUmemFabricHandle and the allocation's size. 76 bytes: "fab1", size
// (uint64, little-endian), the 64 handle bytes.
struct FabricHandle {
  uint64_t bytes = 0;
  std::array<unsigned char, 64> data{};
};
constexpr size_t kFabricHandleBytes = 76;
std::string pack_fabric_handle(const FabricHandle& h);
FabricHandle unpack_fabric_handle(const std::string& bytes);

// `bytes` rounded up to a multiple of `granularity` (at least one granule: a size of 0 still
// gets an address to export).
uint64_t round_up_to_granularity(uint64_t bytes, uint64_t granularity);

// "vmm handles: pidfd_getfd(pid 41, fd 17): Operation not permitted (EPERM): <what allows it>
// (<doing>)". `ptrace_scope`: /proc/sys/kernel/yama/ptrace_scope where readable.
std::string pidfd_failure(const std::string& call, int err, int pid, int fd, std::optional<int> ptrace_scope,
                          const std::string& doing);
// "<allocator> handles: <call>: <CUDA_ERROR_...>[: <what it means here>] (<doing>)"; fabric's
// CUDA_ERROR_NOT_PERMITTED reads "...: no IMEX channel (...; <doing>)".
std::string driver_call_failure(Allocator a, const std::string& call, const std::string& result_name,
                                const std::string& doing);
// "<allocator> handles: this GPU does not support <feature> (<ATTRIBUTE> = 0)<advice>".
std::string unsupported_feature(Allocator a, const std::string& feature, const std::string& attribute);
// Each rank's failure (by rank, empty: none) once per distinct text: "ranks 0, 1: <text>; rank 3:
// <other>", so that N ranks failing alike read as one reason. Empty where none failed.
std::string failures_by_rank(const std::vector<std::string>& failures);
// Why no rank maps its peers' memory when some could not allocate or export it:
// "the ranks cannot share memory with --allocator <a>: <failures_by_rank>".
std::string no_shared_memory_reason(Allocator a, const std::string& failures);
// The value of /proc/sys/kernel/yama/ptrace_scope, or nullopt where there is no Yama.
std::optional<int> read_ptrace_scope();

}  // namespace p2pbench
