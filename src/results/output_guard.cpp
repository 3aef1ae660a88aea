#include "results/output_guard.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace p2pbench {

namespace {

constexpr off_t kLargestReadableResults = off_t(1) << 30;  // larger: not read, treated as not a checkpoint

std::string read_text(int fd) {
  std::string text;
  char buffer[512];
  ssize_t n = 0;
  lseek(fd, 0, SEEK_SET);
  while ((n = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, size_t(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

std::string now_utc() {
  char text[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Opens (creating) the lock file and tries to lock it. The file may be removed by a holder
// that is finishing between our open and our lock: then the lock is on a file nobody else will
// open, so it is taken again on the path's current file.
int open_locked(const std::string& path, bool& held_by_other) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
      throw InputError("--output", "\"" + path + "\"", std::string("cannot create the lock file: ") + std::strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      held_by_other = errno == EWOULDBLOCK;
      if (held_by_other) return fd;
      const int err = errno;
      ::close(fd);
      throw InputError("--output", "\"" + path + "\"", std::string("cannot lock the lock file: ") + std::strerror(err));
    }
    struct stat mine {}, now {};
    if (fstat(fd, &mine) == 0 && stat(path.c_str(), &now) == 0 && mine.st_ino == now.st_ino && mine.st_dev == now.st_dev)
      return fd;
    ::close(fd);  // removed or replaced meanwhile: try the current file
  }
  throw InputError("--output", "\"" + path + "\"", "the lock file keeps being replaced by another process");
}

[[noreturn]] void refuse_in_use(const std::string& results_path, const std::string& holder) {
  throw InputError("--output", "\"" + results_path + "\"",
                   "is in use by another p2pbench run (" + holder + "), which holds its lock file " +
                       OutputLock::lock_path(results_path) + ": give this run another --output, or wait for that one to end");
}

}  // namespace

OutputLock OutputLock::acquire(const std::string& results_path, const std::string& host) {
  const std::string path = lock_path(results_path);
  bool held = false;
  const int fd = open_locked(path, held);
  if (held) {
    const std::string who = read_text(fd);
    ::close(fd);
    refuse_in_use(results_path, who.empty() ? "holder unknown" : who);
  }
  const std::string me = "pid " + std::to_string(getpid()) + " on host " + host + " since " + now_utc();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, me.data(), me.size(), 0) != ssize_t(me.size())) {
    const int err = errno;
    ::close(fd);
    throw InputError("--output", "\"" + path + "\"", std::string("cannot write the lock file: ") + std::strerror(err));
  }
  return OutputLock(fd, path);
}

std::optional<std::string> OutputLock::holder(const std::string& results_path) {
  const int fd = ::open(lock_path(results_path).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> who;
  if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    const std::string text = read_text(fd);
    who = text.empty() ? "holder unknown" : text;
  }
  ::close(fd);  // releases a shared lock we may have taken
  return who;
}

void check_output_not_in_use(const std::string& results_path) {
  if (const auto who = OutputLock::holder(results_path)) refuse_in_use(results_path, *who);
}

OutputLock::OutputLock(OutputLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still locked: a newcomer either sees our lock or no file
  ::close(fd_);
}

void check_output_replaceable(const std::string& results_path, bool force) {
  struct stat st {};
  if (force || lstat(results_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return;
  const auto refuse = [&](const std::string& what) {
    throw InputError("--output", "\"" + results_path + "\"",
                     what + ": a run replaces only the checkpoint of an unfinished run; give another --output, or "
                            "--force to replace it");
  };
  if (st.st_size > kLargestReadableResults) refuse("exists and is larger than a p2pbench checkpoint would be");
  std::ifstream in(results_path, std::ios::binary);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("schema_version"))
    refuse("exists and is not a p2pbench results file");
  if (doc.contains("incomplete") && doc["incomplete"] == true) return;
  const nlohmann::json meta = doc.contains("meta") && doc["meta"].is_object() ? doc["meta"] : nlohmann::json::object();
  const size_t cases = doc.contains("results") && doc["results"].is_array() ? doc["results"].size() : 0;
  const std::string when = meta.contains("timestamp_utc") && meta["timestamp_utc"].is_string()
                         ? ", made " + meta["timestamp_utc"].get<std::string>()
                         : std::string();
  refuse("holds the complete results of an earlier run (" + std::to_string(cases) + " cases" + when + ")");
}

}  // namespace p2pbench
