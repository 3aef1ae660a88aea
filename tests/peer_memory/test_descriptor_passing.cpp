// The vmm allocator's fallback to pidfd_getfd: a descriptor handed over a Unix socket with
// SCM_RIGHTS. Two real processes (fork); a memfd stands in for cuMemCreate's descriptor, so no
// GPU is needed. The received descriptor must be the same file: bytes written through the
// exporter's descriptor are read back through the importer's.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "device/descriptor_passing.hpp"
#include "device/peer_memory.hpp"
#include "../unit/child_process.hpp"

namespace p2pbench {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr char kContent[] = "bytes of the exporter's allocation";

// A child process that offers `fd` of a memfd holding kContent on socket `name`, and serves until
// its parent writes to (or closes) `stop_pipe`. Bounded: it ends on its own after 30 s.
pid_t start_exporter(const std::string& name, int* offered_fd, int stop_pipe[2]) {
  const int memfd = memfd_create("p2pbench-test", MFD_CLOEXEC);
  if (memfd < 0 || write(memfd, kContent, sizeof kContent) != ssize_t(sizeof kContent)) return -1;
  *offered_fd = memfd;
  if (pipe(stop_pipe) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(stop_pipe[1]);
    try {
      DescriptorServer server(name);
      server.offer(memfd);
      pollfd p{stop_pipe[0], POLLIN, 0};
      poll(&p, 1, 30000);
      server.stop();
    } catch (...) {
      _exit(4);
    }
    _exit(0);
  }
  close(stop_pipe[0]);
  return pid;
}

int end_exporter(pid_t pid, int stop_pipe[2]) {
  close(stop_pipe[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

std::string contents_of(int fd) {
  char buffer[sizeof kContent] = {};
  const ssize_t n = pread(fd, buffer, sizeof buffer, 0);
  return n > 0 ? std::string(buffer, size_t(n)) : std::string();
}

TEST(DescriptorPassing, ADescriptorCrossesToAnotherProcessAsTheSameFile) {
  const std::string name = descriptor_socket_name(getpid(), random_socket_id());
  int offered = -1, stop[2];
  const pid_t child = start_exporter(name, &offered, stop);
  ASSERT_GT(child, 0);
  // The exporter may not be listening yet: receive_descriptor retries until its deadline.
  const int got = receive_descriptor(name, offered, 10.0);
  ASSERT_GE(got, 0);
  // The parent's own copy and the received one are distinct descriptors of one file: a write
  // through one is read through the other.
  EXPECT_NE(got, offered);
  EXPECT_EQ(contents_of(got), std::string(kContent, sizeof kContent));
  ASSERT_EQ(pwrite(offered, "B", 1, 0), 1);
  EXPECT_EQ(contents_of(got)[0], 'B');
  close(got);
  // A second peer asks for the same descriptor: served as well.
  const int again = receive_descriptor(name, offered, 10.0);
  EXPECT_EQ(contents_of(again)[0], 'B');
  close(again);
  EXPECT_EQ(end_exporter(child, stop), 0);
  close(offered);
}

TEST(DescriptorPassing, ADescriptorNotOfferedIsRefused) {
  const std::string name = descriptor_socket_name(getpid(), random_socket_id());
  int offered = -1, stop[2];
  const pid_t child = start_exporter(name, &offered, stop);
  ASSERT_GT(child, 0);
  try {
    close(receive_descriptor(name, 0, 10.0));  // stdin: open in the child, never offered
    ADD_FAILURE() << "received a descriptor the exporter did not offer";
  } catch (const RuntimeFailure& e) {
    EXPECT_TRUE(has(e.what(), "refused descriptor 0: the exporter does not offer that descriptor")) << e.what();
  }
  EXPECT_EQ(end_exporter(child, stop), 0);
  close(offered);
}

TEST(DescriptorPassing, NobodyListeningEndsAtTheDeadline) {
  const std::string name = descriptor_socket_name(getpid(), random_socket_id());
  try {
    close(receive_descriptor(name, 3, 0.2));
    ADD_FAILURE() << "received a descriptor from nobody";
  } catch (const RuntimeFailure& e) {
    EXPECT_TRUE(has(e.what(), "nobody listened on socket @" + name + " before the deadline")) << e.what();
  }
}

TEST(DescriptorPassing, AServerThatNeverAnswersEndsAtTheDeadline) {
  // A listener that accepts (the kernel does, from its backlog) but never answers.
  const std::string name = descriptor_socket_name(getpid(), random_socket_id());
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const socklen_t length = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<const sockaddr*>(&address), length), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  try {
    close(receive_descriptor(name, 3, 0.2));
    ADD_FAILURE() << "received a descriptor from a silent server";
  } catch (const RuntimeFailure& e) {
    EXPECT_TRUE(has(e.what(), "did not answer the request for descriptor 3 before the deadline")) << e.what();
  }
  close(listener);
}

TEST(DescriptorPassing, SocketNamesAreAbstractAndDistinctPerExporter) {
  EXPECT_EQ(descriptor_socket_name(41, 0xabcULL), "p2pbench-fd-41-0000000000000abc");
  EXPECT_NE(random_socket_id(), 0u);
  EXPECT_NE(random_socket_id(), random_socket_id());
}

TEST(DescriptorPassing, OnlyAPtraceRefusalOrAMissingCallFallsBackToTheSocket) {
  EXPECT_TRUE(socket_can_replace_pidfd(EPERM));
  EXPECT_TRUE(socket_can_replace_pidfd(EACCES));
  EXPECT_TRUE(socket_can_replace_pidfd(ENOSYS));
  EXPECT_FALSE(socket_can_replace_pidfd(EBADF));  // not open in the exporter: no socket mends that
  EXPECT_FALSE(socket_can_replace_pidfd(ESRCH));  // the exporter is gone
}

// Drops every capability of this process (a test child), so that CAP_SYS_PTRACE, which root
// holds, does not let pidfd_getfd past a non-dumpable exporter.
bool drop_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  return syscall(SYS_capset, &header, data) == 0;
}

// The importer's whole path with pidfd_getfd refused: the exporter child is non-dumpable
// (PR_SET_DUMPABLE 0) and the importer child holds no capability, so the kernel refuses ptrace
// access even to the same user (EPERM) and the socket must hand the descriptor over.
TEST(DescriptorPassing, TakeOrReceiveUsesTheSocketWherePidfdGetfdIsRefused) {
  const uint64_t id = random_socket_id();
  int ready[2], stop[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(stop), 0);
  const pid_t exporter = fork();
  if (exporter == 0) {
    close(ready[0]);
    close(stop[1]);
    int status = 0;
    try {
      if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) _exit(3);
      const int memfd = memfd_create("p2pbench-test", MFD_CLOEXEC);
      if (memfd < 0 || write(memfd, kContent, sizeof kContent) != ssize_t(sizeof kContent)) _exit(3);
      DescriptorServer server(descriptor_socket_name(getpid(), id));
      server.offer(memfd);
      if (write(ready[1], &memfd, sizeof memfd) != ssize_t(sizeof memfd)) _exit(3);
      pollfd p{stop[0], POLLIN, 0};
      poll(&p, 1, 30000);
    } catch (...) {
      status = 4;
    }
    _exit(status);
  }
  close(ready[1]);
  close(stop[0]);
  int fd = -1;
  pollfd p{ready[0], POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 10000), 1);
  ASSERT_EQ(read(ready[0], &fd, sizeof fd), ssize_t(sizeof fd));
  // The importer, in a child of its own: 0 all checks held; 2 pidfd_getfd was not refused;
  // 1 a check failed (said on stderr).
  const int importer = testing::run_in_child([&] {
    if (!drop_capabilities()) return false;
    try {
      close(take_descriptor(exporter, fd, "checking that pidfd_getfd is refused"));
      _exit(2);
    } catch (const PeerMemoryUnavailable&) {
    }
    const int got = take_or_receive_descriptor({int32_t(exporter), fd, 4096, id}, "mapping the test buffer");
    const bool same = contents_of(got) == std::string(kContent, sizeof kContent);
    close(got);
    if (!same) std::fprintf(stderr, "the received descriptor reads other bytes\n");
    // Without a socket in the handle the message says why pidfd_getfd failed and that there was none.
    try {
      close(take_or_receive_descriptor({int32_t(exporter), fd, 4096, 0}, "mapping the test buffer"));
      std::fprintf(stderr, "took a descriptor without ptrace access or a socket\n");
      return false;
    } catch (const PeerMemoryUnavailable& e) {
      const bool said = has(e.what(), "vmm handles: pidfd_getfd(pid ") && has(e.what(), "(EPERM)") &&
                        has(e.what(), "the exporter offers no descriptor socket");
      if (!said) std::fprintf(stderr, "unexpected message: %s\n", e.what());
      return same && said;
    }
  });
  close(stop[1]);
  int status = 0;
  waitpid(exporter, &status, 0);
  close(ready[0]);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(importer, 0) << "2: pidfd_getfd was not refused; 4: an exception; 1: a check failed (stderr)";
}

}  // namespace
}  // namespace p2pbench
