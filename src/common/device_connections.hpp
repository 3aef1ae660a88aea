// The hardware work queues ("connections") CUDA gives a process's context: 8 unless
// CUDA_DEVICE_MAX_CONNECTIONS says otherwise, at most 32. With more streams than queues, several
// streams share a queue, and a kernel that spins until a peer moves (the start gate, the staged
// pipeline's flag kernels) then holds back whatever another stream queued behind it: a false
// dependency that can stall two ranks until their deadlines fire (seen: three ranks' staged ring,
// 14 streams on one GPU). Every p2pbench program asks for 32 before its first CUDA call; a value
// the user set is kept.
//
// MPS clients are the exception: the clients of one MPS server share one pool of connections,
// each owning what it asked for (NVIDIA's MPS documentation). On an H200 three clients asking
// 32 each started and a fourth was refused its context (cudaErrorMemoryAllocation), while four
// asking 16 or 12 ran. So where an MPS daemon is reachable a rank asks for its share of 96
// among the node's ranks: 32 up to three ranks, 24 for four, 12 for eight, never below 4.
#pragma once

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace p2pbench {

inline constexpr const char* kDeviceConnectionsVariable = "CUDA_DEVICE_MAX_CONNECTIONS";
inline constexpr int kDeviceConnectionsWanted = 32;
inline constexpr int kMpsConnectionPool = 96;
inline constexpr int kFewestConnections = 4;

// Whether CUDA will find an MPS control daemon: its control socket (a pipe in old versions) in
// CUDA_MPS_PIPE_DIRECTORY, by default /tmp/nvidia-mps, with the daemon behind it. A daemon told to
// quit leaves its socket behind (seen on an H200 node, driver 580), so the socket must also take
// a connection: refused means no daemon. A pipe, or a socket that cannot be tried (no rights, a
// path too long for a socket address), counts as reachable. No CUDA call.
inline bool mps_daemon_reachable() {
  const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string control = std::string(dir && *dir ? dir : "/tmp/nvidia-mps") + "/control";
  struct stat st {};
  if (stat(control.c_str(), &st) != 0) return false;
  if (S_ISFIFO(st.st_mode)) return true;
  if (!S_ISSOCK(st.st_mode)) return false;
  sockaddr_un address{};
  if (control.size() >= sizeof(address.sun_path)) return true;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, control.c_str(), control.size() + 1);
  // Non-blocking: a daemon whose backlog is full answers EAGAIN at once instead of holding us.
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return true;
  const bool refused = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 &&
                       (errno == ECONNREFUSED || errno == ENOENT);
  close(fd);
  return !refused;
}

// The ranks the launcher started on this node (Open MPI, MPICH's Hydra, PMIx, Slurm), or 1.
inline int node_local_ranks_by_environment() {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMIX_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"}) {
    if (const char* v = std::getenv(var)) {
      const int n = std::atoi(v);  // Slurm may write "4(x2)": the leading count is this node's
      if (n > 0) return n;
    }
  }
  return 1;
}

// How many connections a process asks for: 32, or under MPS its share of the server's pool.
inline int device_connections_wanted(bool mps, int node_local_ranks) {
  if (!mps) return kDeviceConnectionsWanted;
  return std::clamp(kMpsConnectionPool / std::max(1, node_local_ranks), kFewestConnections, kDeviceConnectionsWanted);
}

// Call before the process's first CUDA call: the driver reads the variable when it makes a context.
inline void request_device_connections(int wanted = kDeviceConnectionsWanted) {
  setenv(kDeviceConnectionsVariable, std::to_string(wanted).c_str(), 0);
}

// A warning for a value the user set below what p2pbench asks for (training images often set
// 1), or "" when it is unset or high enough. Call before request_device_connections().
inline std::string device_connections_warning(int wanted = kDeviceConnectionsWanted) {
  const char* set = std::getenv(kDeviceConnectionsVariable);
  if (set == nullptr || *set == '\0') return "";
  const long value = std::strtol(set, nullptr, 10);
  if (value >= wanted) return "";
  return std::string(kDeviceConnectionsVariable) + "=" + set + " is set: each GPU context gets that many hardware queues, and " +
         "p2pbench asks for " + std::to_string(wanted) + ". With fewer, a kernel that spins until a peer moves can hold back "
         "work queued behind it (ranks sharing a GPU, the staged ring) until a deadline fails the case; unset it for "
         "p2pbench, or set " + std::to_string(wanted);
}

}  // namespace p2pbench
