#include "engines/shared_host_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include "common/errors.hpp"
#include "common/safe_file.hpp"
#include "common/text_format.hpp"

namespace p2pbench {

namespace {

std::string os_error(const std::string& what, int err = errno) { return what + ": " + std::strerror(err); }

size_t whole_pages(size_t bytes) {
  const auto page = size_t(sysconf(_SC_PAGESIZE));
  return (std::max<size_t>(bytes, 1) + page - 1) / page * page;
}

// Maps `bytes` of `fd` and closes it (the mapping keeps the object).
void* map_object(int fd, size_t bytes, const std::string& what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) throw RuntimeFailure(os_error("mapping " + what, err));
  return p;
}

}  // namespace

SharedHostMemory::SharedHostMemory(std::string name, void* mapping, size_t bytes, bool owner, std::string what)
    : name_(std::move(name)), what_(std::move(what)), mapping_(mapping), bytes_(bytes), owner_(owner) {}

SharedHostMemory::SharedHostMemory(SharedHostMemory&& o) noexcept
    : name_(std::move(o.name_)),
      what_(std::move(o.what_)),
      mapping_(std::exchange(o.mapping_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)),
      owner_(std::exchange(o.owner_, false)),
      unlinked_(std::exchange(o.unlinked_, true)),
      registration_(std::move(o.registration_)) {}

SharedHostMemory& SharedHostMemory::operator=(SharedHostMemory&& o) noexcept {
  if (this != &o) {
    release();
    name_ = std::move(o.name_);
    what_ = std::move(o.what_);
    mapping_ = std::exchange(o.mapping_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    owner_ = std::exchange(o.owner_, false);
    unlinked_ = std::exchange(o.unlinked_, true);
    registration_ = std::move(o.registration_);
  }
  return *this;
}

SharedHostMemory::~SharedHostMemory() { release(); }

void SharedHostMemory::release() noexcept {
  registration_ = HostRegistration();  // unregister before unmapping
  if (mapping_) munmap(mapping_, bytes_);
  mapping_ = nullptr;
  if (owner_ && !unlinked_) shm_unlink(name_.c_str());
  unlinked_ = true;
}

SharedHostMemory SharedHostMemory::create(size_t bytes, const std::string& what) {
  bytes = whole_pages(bytes);
  std::random_device rd;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string name = "/p2pbench-" + std::to_string(getpid()) + "-" + std::to_string(rd());
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) throw RuntimeFailure(os_error("creating " + what + " (POSIX shared memory " + name + ")"));
    // Real pages reserved now (posix_fallocate, which also sets the size): a full /dev/shm is
    // this error, not a SIGBUS at the first touch below.
    try {
      reserve_file_space(fd, bytes, what + " (" + format_size(bytes) + " of POSIX shared memory " + name + ")");
    } catch (...) {
      close(fd);
      shm_unlink(name.c_str());
      throw;
    }
    void* mapping = nullptr;
    try {
      mapping = map_object(fd, bytes, what + " (" + name + ")");
    } catch (...) {
      shm_unlink(name.c_str());
      throw;
    }
    // First touch from the creating process (see the header).
    std::memset(mapping, 0, bytes);
    return SharedHostMemory(name, mapping, bytes, true, what);
  }
  throw RuntimeFailure("creating " + what + " (POSIX shared memory): no free name after 16 tries");
}

SharedHostMemory SharedHostMemory::open(const std::string& name, size_t bytes, const std::string& what) {
  bytes = whole_pages(bytes);
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw RuntimeFailure(os_error("opening " + what + " (POSIX shared memory " + name + ")"));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    throw RuntimeFailure(os_error("reading the size of " + what + " (POSIX shared memory " + name + ")", err));
  }
  if (uint64_t(st.st_size) < bytes) {
    close(fd);
    throw RuntimeFailure("opening " + what + " (POSIX shared memory " + name + "): it holds " +
                         std::to_string(st.st_size) + " bytes, expected at least " + std::to_string(bytes));
  }
  return SharedHostMemory(name, map_object(fd, bytes, what + " (" + name + ")"), bytes, false, what);
}

void SharedHostMemory::unlink() {
  if (owner_ && !unlinked_ && shm_unlink(name_.c_str()) != 0)
    throw RuntimeFailure(os_error("removing the name of " + what_ + " (POSIX shared memory " + name_ + ")"));
  unlinked_ = true;
}

void SharedHostMemory::register_with_device() {
  if (!mapping_) throw RuntimeFailure("registering " + what_ + ": nothing is mapped");
  registration_ = HostRegistration(mapping_, bytes_, what_);
}

std::optional<uint64_t> SharedHostMemory::free_bytes(const char* directory) {
  struct statvfs fs {};
  if (statvfs(directory, &fs) != 0) return std::nullopt;
  return uint64_t(fs.f_bavail) * uint64_t(fs.f_frsize);
}

std::optional<std::string> shm_space_problem(std::optional<uint64_t> free, uint64_t needed, const std::string& who,
                                             const char* directory) {
  if (!free || *free >= needed) return std::nullopt;
  return std::string(directory) + " has " + format_size(*free) + " free, " + who + " needs " + format_size(needed) +
         ": enlarge it (e.g. --shm-size for containers)";
}

}  // namespace p2pbench
