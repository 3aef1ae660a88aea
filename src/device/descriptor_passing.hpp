// Handing a file descriptor to another process of the same user over a Unix domain socket
// (SCM_RIGHTS): the vmm allocator's way to share cuMemCreate's POSIX-fd handles where the kernel
// refuses pidfd_getfd (ptrace access, docs/allocators.md). Plain POSIX, no CUDA, so the unit
// tests pass a memfd between two forked processes.
//
// The exporter serves from a thread of its own: every rank's server is listening before the
// handles are exchanged, and a rank's main thread only ever asks, so any number of ranks can
// take each other's descriptors in any order without waiting on one another. Every wait has a
// deadline.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "common/errors.hpp"

namespace p2pbench {

// The abstract socket (no file to clean up, gone with the process) of process `pid` with the
// random `socket_id` it chose: "p2pbench-fd-<pid>-<socket_id hex>". The random part keeps two
// jobs apart where PID namespaces differ but the network namespace is shared.
std::string descriptor_socket_name(int32_t pid, uint64_t socket_id);
// A random 64-bit id, never 0 (0 in a handle means "no socket").
uint64_t random_socket_id();

// Serves the descriptors this process offered to connecting processes of the same user (checked
// with SO_PEERCRED); any other descriptor number is refused. Listening from construction until
// stop() or destruction.
class DescriptorServer {
 public:
  // RuntimeFailure naming the call and errno where the socket cannot be made.
  explicit DescriptorServer(std::string name);
  ~DescriptorServer();
  DescriptorServer(const DescriptorServer&) = delete;
  DescriptorServer& operator=(const DescriptorServer&) = delete;

  const std::string& name() const { return name_; }
  // `fd` may be handed out from now on (it must stay open while the server runs).
  void offer(int fd);
  // Stops serving and closes the socket; returns within about one poll interval (0.1 s).
  void stop();

  // How long the server waits for an accepted client's request before dropping it.
  static constexpr double kRequestDeadlineS = 2.0;

 private:
  void serve();
  void answer(int connection);

  std::string name_;
  int listener_ = -1;
  std::mutex mutex_;
  std::set<int> offered_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// Connects to the server `name`, asks for its descriptor `fd` and returns this process's copy
// (the caller closes it). Connecting is retried until `deadline_s` (the server may not be
// listening yet); the answer must come within the same deadline. RuntimeFailure saying which
// step failed or ran out of time.
int receive_descriptor(const std::string& name, int32_t fd, double deadline_s);

}  // namespace p2pbench
