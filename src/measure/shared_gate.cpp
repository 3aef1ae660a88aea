#include "measure/shared_gate.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "common/errors.hpp"
#include "common/safe_file.hpp"

namespace p2pbench {

namespace {

constexpr size_t kGateBytes = 4096;  // one page: cudaHostRegister works on whole pages

std::string os_error(const std::string& what) { return what + ": " + std::strerror(errno); }

void* map_object(int fd, const std::string& name) {
  void* p = mmap(nullptr, kGateBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) throw RuntimeFailure(os_error("mapping the start-gate shared memory " + name));
  return p;
}

}  // namespace

SharedGate::SharedGate(std::string name, void* mapping, bool owner)
    : name_(std::move(name)), mapping_(mapping), owner_(owner) {}

SharedGate::SharedGate(SharedGate&& o) noexcept
    : name_(std::move(o.name_)),
      mapping_(std::exchange(o.mapping_, nullptr)),
      owner_(o.owner_),
      unlinked_(std::exchange(o.unlinked_, true)),
      issued_(o.issued_),
      registration_(std::move(o.registration_)) {}

SharedGate SharedGate::create() {
  std::random_device rd;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string name = "/p2pbench-" + std::to_string(getpid()) + "-" + std::to_string(rd());
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) throw RuntimeFailure(os_error("creating the start-gate shared memory " + name));
    // Real pages reserved now: ftruncate alone would let a full /dev/shm raise SIGBUS at the
    // first touch below instead of saying what is wrong.
    try {
      reserve_file_space(fd, kGateBytes, "the start gate (POSIX shared memory " + name + ")");
    } catch (...) {
      close(fd);
      shm_unlink(name.c_str());
      throw;
    }
    void* mapping = nullptr;
    try {
      mapping = map_object(fd, name);
    } catch (...) {
      shm_unlink(name.c_str());
      throw;
    }
    std::memset(mapping, 0, kGateBytes);
    return SharedGate(name, mapping, true);
  }
  throw RuntimeFailure("creating the start-gate shared memory: no free name after 16 tries");
}

SharedGate SharedGate::open(const std::string& name) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw RuntimeFailure(os_error("opening the start-gate shared memory " + name));
  return SharedGate(name, map_object(fd, name), false);
}

SharedGate::~SharedGate() {
  registration_ = HostRegistration();  // unregister before unmapping
  if (mapping_) munmap(mapping_, kGateBytes);
  if (owner_ && !unlinked_) shm_unlink(name_.c_str());
}

void SharedGate::unlink() {
  if (owner_ && !unlinked_ && shm_unlink(name_.c_str()) != 0)
    throw RuntimeFailure(os_error("removing the start-gate shared memory " + name_));
  unlinked_ = true;
}

void SharedGate::register_with_device() { registration_ = HostRegistration(mapping_, kGateBytes, "the start gate"); }

void SharedGate::release(uint32_t ticket) {
  __atomic_store_n(static_cast<uint32_t*>(mapping_), ticket, __ATOMIC_RELEASE);
}

uint32_t SharedGate::current() const { return __atomic_load_n(static_cast<const uint32_t*>(mapping_), __ATOMIC_ACQUIRE); }

}  // namespace p2pbench
