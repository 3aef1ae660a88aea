// Runs a test body in a forked child, so it can change what the process may do (a file-size
// limit, another user) without touching the test runner.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace p2pbench::testing {

// `prepare` runs first in the child (return false: exit 5); then `body`. The status is the
// child's exit code: 0 when `body` returned true, 1 when false, 4 when it threw, 100 + the
// signal when a signal ended it.
inline int run_in_child(const std::function<bool()>& body, const std::function<bool()>& prepare = [] { return true; }) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!prepare()) _exit(5);
    bool ok = false;
    try {
      ok = body();
    } catch (...) {
      _exit(4);
    }
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

}  // namespace p2pbench::testing
