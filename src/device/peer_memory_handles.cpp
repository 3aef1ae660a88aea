// The byte formats of exported handles and the texts of the allocators' failures: plain C++,
// no CUDA call, so that the unit tests check them on a machine without a GPU.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "device/peer_memory.hpp"

namespace p2pbench {

namespace {

constexpr char kFdTag[] = "vmm2";
constexpr char kFabricTag[] = "fab1";

// Little-endian on the wire, whatever the host: both ends are one node today, but the format
// should not depend on that.
void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const std::string& in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(in[at + size_t(i)])) << (8 * i);
  return v;
}

// A received handle is checked for its size and tag before any field is read: a rank that runs
// another allocator (a mixed job) or a truncated exchange is named, not misread.
void check_handle(const std::string& bytes, size_t size, const char* tag, const char* kind) {
  if (bytes.size() != size || bytes.compare(0, 4, tag) != 0)
    throw RuntimeFailure(std::string("received a malformed ") + kind + " handle (" + std::to_string(bytes.size()) +
                         " bytes, expected " + std::to_string(size) + " starting with \"" + tag +
                         "\"): do all ranks run the same --allocator?");
}

const char* errno_name(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOSYS: return "ENOSYS";
    case ESRCH: return "ESRCH";
    case EBADF: return "EBADF";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    case EINVAL: return "EINVAL";
    default: return nullptr;
  }
}

// What would let this process take a peer's descriptor (man 2 pidfd_getfd: the caller needs
// PTRACE_MODE_ATTACH_REALCREDS over the target, which Yama narrows further).
std::string ptrace_advice(std::optional<int> scope) {
  std::string advice =
      "taking a descriptor from another process needs ptrace access to it: run the ranks as the same user and "
      "either give them CAP_SYS_PTRACE or set kernel.yama.ptrace_scope=0";
  if (scope == 3) advice += " (it is 3 here: no process may attach to another until reboot)";
  else if (scope) advice += " (it is " + std::to_string(*scope) + " here)";
  return advice + "; in a container the seccomp profile may refuse the call too (docker: --cap-add SYS_PTRACE)";
}

std::string pidfd_advice(int err, int pid, std::optional<int> scope) {
  switch (err) {
    case EPERM:
    case EACCES: return ptrace_advice(scope);
    case ENOSYS: return "pidfd_open and pidfd_getfd need Linux 5.6 or newer, and a seccomp profile that allows them";
    case ESRCH:
      return "no process " + std::to_string(pid) + " in this PID namespace: the ranks of a node must share one";
    case EBADF: return "the exporting rank's descriptor is not open (closed before the peer took it)";
    case EMFILE:
    case ENFILE: return "too many open files (ulimit -n)";
    default: return "";
  }
}

}  // namespace

std::string pack_fd_handle(const FdHandle& h) {
  std::string out(kFdTag, 4);
  put_le(out, uint32_t(h.pid), 4);
  put_le(out, uint32_t(h.fd), 4);
  put_le(out, h.bytes, 8);
  put_le(out, h.socket_id, 8);
  return out;
}

FdHandle unpack_fd_handle(const std::string& bytes) {
  check_handle(bytes, kFdHandleBytes, kFdTag, "vmm (file descriptor)");
  FdHandle h;
  h.pid = int32_t(uint32_t(get_le(bytes, 4, 4)));
  h.fd = int32_t(uint32_t(get_le(bytes, 8, 4)));
  h.bytes = get_le(bytes, 12, 8);
  h.socket_id = get_le(bytes, 20, 8);
  return h;
}

std::string pack_fabric_handle(const FabricHandle& h) {
  std::string out(kFabricTag, 4);
  put_le(out, h.bytes, 8);
  out.append(reinterpret_cast<const char*>(h.data.data()), h.data.size());
  return out;
}

FabricHandle unpack_fabric_handle(const std::string& bytes) {
  check_handle(bytes, kFabricHandleBytes, kFabricTag, "fabric");
  FabricHandle h;
  h.bytes = get_le(bytes, 4, 8);
  std::memcpy(h.data.data(), bytes.data() + 12, h.data.size());
  return h;
}

uint64_t round_up_to_granularity(uint64_t bytes, uint64_t granularity) {
  if (granularity == 0) return bytes;
  const uint64_t granules = bytes == 0 ? 1 : (bytes + granularity - 1) / granularity;
  return granules * granularity;
}

std::string pidfd_failure(const std::string& call, int err, int pid, int fd, std::optional<int> ptrace_scope,
                          const std::string& doing) {
  const char* name = errno_name(err);
  // pidfd_open takes no descriptor: only pidfd_getfd's failure names one.
  const std::string args = "pid " + std::to_string(pid) + (call == "pidfd_getfd" ? ", fd " + std::to_string(fd) : "");
  std::string text = "vmm handles: " + call + "(" + args + "): " + std::strerror(err) + " (" +
                     (name ? name : "errno " + std::to_string(err)) + ")";
  const std::string advice = pidfd_advice(err, pid, ptrace_scope);
  if (!advice.empty()) text += ": " + advice;
  return text + " (" + doing + ")";
}

std::string driver_call_failure(Allocator a, const std::string& call, const std::string& result_name,
                                const std::string& doing) {
  const std::string text = std::string(to_string(a)) + " handles: " + call + ": " + result_name;
  if (a == Allocator::kFabric && result_name == "CUDA_ERROR_NOT_PERMITTED")
    return text + ": no IMEX channel (fabric handles need the IMEX service, nvidia-imex, and a channel this user may "
                  "open, /dev/nvidia-caps-imex-channels/channel0; vmm and legacy need neither; " + doing + ")";
  return text + " (" + doing + ")";
}

std::string unsupported_feature(Allocator a, const std::string& feature, const std::string& attribute) {
  return std::string(to_string(a)) + " handles: this GPU or driver does not support " + feature + " (" + attribute +
         " = 0); --allocator legacy (CUDA IPC) needs no such support";
}

std::string failures_by_rank(const std::vector<std::string>& failures) {
  std::vector<std::pair<std::string, std::vector<size_t>>> groups;  // in the order of their first rank
  for (size_t r = 0; r < failures.size(); ++r) {
    if (failures[r].empty()) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == failures[r]; });
    if (it == groups.end()) groups.push_back({failures[r], {r}});
    else it->second.push_back(r);
  }
  std::string out;
  for (const auto& [text, ranks] : groups) {
    out += (out.empty() ? "" : "; ") + std::string(ranks.size() > 1 ? "ranks " : "rank ");
    for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
    out += ": " + text;
  }
  return out;
}

std::string no_shared_memory_reason(Allocator a, const std::string& failures) {
  return std::string("the ranks cannot share memory with --allocator ") + to_string(a) + ": " + failures;
}

std::optional<int> read_ptrace_scope() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  if (in >> scope && scope >= 0) return scope;
  return std::nullopt;
}

}  // namespace p2pbench
