#include "device/descriptor_passing.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>

namespace p2pbench {

namespace {

using Clock = std::chrono::steady_clock;

// The server's answer: 0 with the descriptor attached, or why not (an errno value).
constexpr int32_t kAnswerOk = 0;
constexpr int kPollIntervalMs = 100;

std::string errno_text(const char* call, int err) { return std::string(call) + ": " + std::strerror(err); }

// A socket of this process, closed at destruction.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// An abstract address: a leading NUL, no file in the file system.
socklen_t abstract_address(const std::string& name, sockaddr_un& address) {
  if (name.size() + 1 > sizeof address.sun_path)
    throw RuntimeFailure("the socket name " + name + " is longer than a Unix socket address allows");
  std::memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  return socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

int milliseconds_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? int(left) : 0;
}

// Waits until `fd` is readable; false when the deadline passed first.
bool readable_by(int fd, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, milliseconds_until(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) throw RuntimeFailure(errno_text("poll", errno));
  }
}

// Connects to `address`, retrying while nobody listens yet, until the deadline.
void connect_by(int fd, const sockaddr_un& address, socklen_t length, const std::string& name,
                Clock::time_point deadline) {
  for (;;) {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), length) == 0) return;
    const int err = errno;
    if (err != ECONNREFUSED && err != ENOENT && err != EAGAIN && err != EINTR)
      throw RuntimeFailure(errno_text("connect", err) + " (socket @" + name + ")");
    if (Clock::now() >= deadline)
      throw RuntimeFailure("nobody listened on socket @" + name + " before the deadline (last connect: " +
                           std::strerror(err) + ")");
    ::usleep(10000);  // the exporter's server is not listening yet: try again shortly
  }
}

// One answer: a status and, with kAnswerOk, the descriptor in the ancillary data.
void send_answer(int connection, int32_t status, int fd) {
  iovec part{&status, sizeof status};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (status == kAnswerOk) {
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  // A client that left already is its own problem: the server goes on serving the others.
  (void)::sendmsg(connection, &message, MSG_NOSIGNAL);
}

// The answer to a request: the descriptor (this process's copy), or RuntimeFailure.
int read_answer(int fd, const std::string& name, int32_t asked, Clock::time_point deadline) {
  if (!readable_by(fd, deadline))
    throw RuntimeFailure("socket @" + name + " did not answer the request for descriptor " + std::to_string(asked) +
                         " before the deadline");
  int32_t status = -1;
  iovec part{&status, sizeof status};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  const ssize_t got = ::recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
  if (got < 0) throw RuntimeFailure(errno_text("recvmsg", errno) + " (socket @" + name + ")");
  if (got != ssize_t(sizeof status))
    throw RuntimeFailure("socket @" + name + " closed the connection without answering");
  const cmsghdr* c = CMSG_FIRSTHDR(&message);
  const bool attached = c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
                        c->cmsg_len == CMSG_LEN(sizeof(int));
  int received = -1;
  if (attached) std::memcpy(&received, CMSG_DATA(c), sizeof received);
  if (status == kAnswerOk && received >= 0) return received;
  if (received >= 0) ::close(received);
  if (status == kAnswerOk) throw RuntimeFailure("socket @" + name + " answered without a descriptor");
  throw RuntimeFailure("socket @" + name + " refused descriptor " + std::to_string(asked) + ": " +
                       (status == EBADF ? "the exporter does not offer that descriptor"
                                        : status == EACCES ? "the ranks run as different users"
                                                           : std::strerror(status)));
}

}  // namespace

std::string descriptor_socket_name(int32_t pid, uint64_t socket_id) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(socket_id));
  return "p2pbench-fd-" + std::to_string(pid) + "-" + hex;
}

uint64_t random_socket_id() {
  std::random_device source;
  uint64_t id = 0;
  while (id == 0) id = (uint64_t(source()) << 32) ^ uint64_t(source());
  return id;
}

DescriptorServer::DescriptorServer(std::string name) : name_(std::move(name)) {
  listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listener_ < 0) throw RuntimeFailure(errno_text("socket(AF_UNIX)", errno));
  sockaddr_un address;
  const socklen_t length = abstract_address(name_, address);
  if (::bind(listener_, reinterpret_cast<const sockaddr*>(&address), length) != 0 || ::listen(listener_, 64) != 0) {
    const int err = errno;
    ::close(listener_);
    throw RuntimeFailure(errno_text("binding the descriptor socket", err) + " (@" + name_ + ")");
  }
  thread_ = std::thread([this] { serve(); });
}

DescriptorServer::~DescriptorServer() { stop(); }

void DescriptorServer::offer(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  offered_.insert(fd);
}

void DescriptorServer::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (listener_ >= 0) ::close(listener_);
  listener_ = -1;
}

// Polls with a short interval so that stop() is noticed; clients are answered one at a time
// (each answer is one small message).
void DescriptorServer::serve() {
  while (!stopping_) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, kPollIntervalMs) <= 0) continue;
    const int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;  // the client gave up meanwhile, or EINTR
    answer(connection);
    ::close(connection);
  }
}

void DescriptorServer::answer(int connection) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(int64_t(kRequestDeadlineS * 1e3));
  ucred peer{};
  socklen_t length = sizeof peer;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.uid != ::getuid()) {
    send_answer(connection, EACCES, -1);  // a descriptor of device memory goes to the same user only
    return;
  }
  int32_t asked = -1;
  if (!readable_by(connection, deadline)) return;  // a silent client is dropped, not waited for
  if (::recv(connection, &asked, sizeof asked, MSG_DONTWAIT) != ssize_t(sizeof asked)) return;
  bool offered = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    offered = offered_.count(asked) > 0;
  }
  send_answer(connection, offered ? kAnswerOk : EBADF, asked);
}

int receive_descriptor(const std::string& name, int32_t fd, double deadline_s) {
  const Clock::time_point deadline = Clock::now() + std::chrono::microseconds(int64_t(deadline_s * 1e6));
  // Non-blocking: a full backlog answers EAGAIN (retried) instead of blocking in connect.
  const Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (s.get() < 0) throw RuntimeFailure(errno_text("socket(AF_UNIX)", errno));
  sockaddr_un address;
  const socklen_t length = abstract_address(name, address);
  connect_by(s.get(), address, length, name, deadline);
  if (::send(s.get(), &fd, sizeof fd, MSG_NOSIGNAL) != ssize_t(sizeof fd))
    throw RuntimeFailure(errno_text("send", errno) + " (socket @" + name + ")");
  return read_answer(s.get(), name, fd, deadline);
}

}  // namespace p2pbench
