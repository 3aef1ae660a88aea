#include "common/safe_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <vector>

#include "common/errors.hpp"

namespace p2pbench {

namespace {

std::string os_reason(int err) { return std::strerror(err); }

// "dir/name" -> "dir"; "name" -> "."; "/name" -> "/".
std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string file_name_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The process's umask without changing it (umask() can only be read by setting it, which
// would race with other threads creating files). Linux 4.7+ reports it in /proc/self/status.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) return mode_t(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

// A temporary file that removes itself unless committed.
class TempFile {
 public:
  explicit TempFile(const std::string& target) {
    std::vector<char> name_template;
    const std::string pattern = directory_of(target) + "/." + file_name_of(target) + ".tmp.XXXXXX";
    name_template.assign(pattern.begin(), pattern.end());
    name_template.push_back('\0');
    // mkostemp opens with O_CREAT|O_EXCL: it never opens an existing name or follows a symlink.
    fd_ = mkostemp(name_template.data(), O_CLOEXEC);
    if (fd_ < 0)
      throw RuntimeFailure("writing the results to " + target + ": cannot create a temporary file in " +
                           directory_of(target) + ": " + os_reason(errno));
    name_ = name_template.data();
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!name_.empty()) ::unlink(name_.c_str());
  }

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }
  // Closes the descriptor, returning close()'s errno (0 on success).
  int close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }
  void committed() { name_.clear(); }

 private:
  int fd_ = -1;
  std::string name_;
};

// Writes all of `text`, resuming after short writes and EINTR; returns errno or 0.
int write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += size_t(n);
  }
  return 0;
}

// fsync of the directory makes the rename itself durable. Some file systems cannot fsync a
// directory (EINVAL); that is not an error of the write.
int sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int rc = ::fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
  ::close(fd);
  return rc;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text, bool durable) {
  if (path.empty() || path.back() == '/')
    throw RuntimeFailure("writing the results to \"" + path + "\": not a file name");
  TempFile tmp(path);
  auto fail = [&](const std::string& step, int err) {
    throw RuntimeFailure("writing the results to " + path + ": " + step + " " + tmp.name() + " failed: " +
                         os_reason(err) + " (any existing " + path + " is unchanged)");
  };
  if (fchmod(tmp.fd(), 0666 & ~current_umask()) != 0) fail("setting the permissions of", errno);
  if (int err = write_all(tmp.fd(), text)) fail("writing", err);
  if (durable && ::fsync(tmp.fd()) != 0) fail("flushing (fsync)", errno);
  if (int err = tmp.close()) fail("closing", err);
  if (std::rename(tmp.name().c_str(), path.c_str()) != 0) fail("renaming over the target", errno);
  tmp.committed();
  if (!durable) return;
  if (int err = sync_directory(directory_of(path)))
    throw RuntimeFailure("wrote the results to " + path + ", but flushing its directory (fsync) failed: " +
                         os_reason(err) + "; the file may not survive an OS crash");
}

void check_output_path(const std::string& path, const std::string& flag) {
  auto refuse = [&](const std::string& why) { throw InputError(flag, "\"" + path + "\"", why); };
  if (path.empty()) refuse("empty file name");
  if (path.back() == '/') refuse("names a directory; give a file name such as results.json");
  struct stat st {};
  std::optional<uid_t> existing_owner;
  if (lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) refuse("is a directory; give a file name inside it");
    if (S_ISLNK(st.st_mode))
      refuse("is a symbolic link; the results replace the link itself (they are never written through it), so "
             "give the link's target or another name");
    if (!S_ISREG(st.st_mode)) refuse("exists and is not a regular file");
    existing_owner = st.st_uid;
  }
  const std::string dir = directory_of(path);
  if (stat(dir.c_str(), &st) != 0) refuse("the directory " + dir + " cannot be used: " + os_reason(errno));
  if (!S_ISDIR(st.st_mode)) refuse(dir + " is not a directory");
  // In a sticky directory (/tmp) only the file's owner, the directory's owner or root may
  // replace it: the first checkpoint's rename would fail after a case had run.
  const uid_t me = geteuid();
  if (existing_owner && (st.st_mode & S_ISVTX) && *existing_owner != me && st.st_uid != me && me != 0)
    refuse("belongs to another user (uid " + std::to_string(*existing_owner) + ") in the sticky directory " + dir +
           ", so this run could not replace it; give another name");
  // The probe is a fresh mkstemp name, removed at once: nothing predictable to plant.
  std::string probe = dir + "/.p2pbench-probe-XXXXXX";
  const int fd = mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) refuse("cannot create files in the directory " + dir + ": " + os_reason(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

void reserve_file_space(int fd, uint64_t bytes, const std::string& what) {
  if (bytes > uint64_t(std::numeric_limits<off_t>::max()))
    throw RuntimeFailure("reserving " + std::to_string(bytes) + " bytes for " + what + ": larger than a file can be");
  // posix_fallocate returns the error number instead of setting errno.
  const int err = posix_fallocate(fd, 0, off_t(bytes));
  if (err == 0) return;
  std::string hint;
  if (err == ENOSPC) hint = " (the shared-memory file system, usually /dev/shm, is full or too small: free it or enlarge it, e.g. docker run --shm-size)";
  if (err == EFBIG) hint = " (above the file-size limit, see ulimit -f)";
  throw RuntimeFailure("reserving " + std::to_string(bytes) + " bytes for " + what + " failed: " + os_reason(err) + hint);
}

}  // namespace p2pbench
