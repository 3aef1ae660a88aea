#include "methods/gds/gds_file.hpp"

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"

namespace p2pbench::gds {

namespace {

std::string errno_text(int e) { return "errno " + std::to_string(e) + " (" + std::strerror(e) + ")"; }

// statfs(2)'s f_type of the filesystems a GPU node is likely to have.
std::string filesystem_of(int fd) {
  struct statfs s{};
  if (fstatfs(fd, &s) != 0) return "unknown";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x01021994: return "tmpfs";
    case 0x794C7630: return "overlayfs";
    case 0x6969: return "nfs";
    case 0x9123683E: return "btrfs";
    case 0x0BD00BD0: return "lustre";
    default: {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(s.f_type));
      return hex;
    }
  }
}

}  // namespace

std::optional<CaseFile> CaseFile::create(const std::string& directory, int rank, const std::string& tag, std::string& why) {
  CaseFile f;
  f.path_ = directory + "/p2pbench-gds-" + std::to_string(getpid()) + "-" + std::to_string(rank) + "-" + tag + ".bin";
  f.fd_ = ::open(f.path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
  f.direct_io_ = f.fd_ >= 0;
  if (f.fd_ < 0 && errno == EINVAL) {  // the filesystem refuses O_DIRECT
    f.cached_because_ = "the filesystem refused O_DIRECT: " + errno_text(errno);
    f.fd_ = ::open(f.path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  }
  if (f.fd_ < 0) {
    why = "cannot create the case's file " + f.path_ + ": " + errno_text(errno);
    return std::nullopt;
  }
  f.filesystem_ = filesystem_of(f.fd_);
  return f;
}

CaseFile& CaseFile::operator=(CaseFile&& o) noexcept {
  if (this != &o) {
    this->~CaseFile();
    fd_ = o.fd_;
    direct_io_ = o.direct_io_;
    path_ = std::move(o.path_);
    filesystem_ = std::move(o.filesystem_);
    cached_because_ = std::move(o.cached_because_);
    o.fd_ = -1;
  }
  return *this;
}

CaseFile::~CaseFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(path_.c_str());
  fd_ = -1;
}

void CaseFile::read_all(void* host, size_t bytes, uint64_t file_offset) const {
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::pread(fd_, static_cast<char*>(host) + done, bytes - done, off_t(file_offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw RuntimeFailure("reading " + std::to_string(bytes) + " bytes at " + std::to_string(file_offset) + " of " + path_ +
                           ": " + (n == 0 ? std::string("the file ended") : errno_text(errno)));
    done += size_t(n);
  }
}

void CaseFile::write_all(const void* host, size_t bytes, uint64_t file_offset) const {
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::pwrite(fd_, static_cast<const char*>(host) + done, bytes - done, off_t(file_offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw RuntimeFailure("writing " + std::to_string(bytes) + " bytes at " + std::to_string(file_offset) + " of " + path_ +
                           ": " + (n == 0 ? std::string("nothing written") : errno_text(errno)));
    done += size_t(n);
  }
}

Bounce::Bounce(size_t largest_transfer)
    : chunk_(std::max(kAlignment, std::min(kChunkBytes, largest_transfer))),
      host_{MappedHostBuffer(chunk_, "a gds bounce chunk"), MappedHostBuffer(chunk_, "a gds bounce chunk")},
      done_{make_untimed_event("a gds bounce chunk's copy"), make_untimed_event("a gds bounce chunk's copy")} {}

void Bounce::wait_chunk(int i, double deadline_s) {
  if (!pending_[i]) return;
  wait_for_event(done_[i].get(), deadline_s, "a gds bounce chunk's copy");
  pending_[i] = false;
}

// Chunk k goes through host_[k % 2]; the copy that last used that chunk must be done before the
// host overwrites it.
void Bounce::file_to_device(const CaseFile& f, void* dst, size_t bytes, cudaStream_t stream, double deadline_s) {
  for (size_t off = 0, k = 0; off < bytes; off += chunk_, ++k) {
    const int i = int(k % 2);
    const size_t n = std::min(chunk_, bytes - off);
    wait_chunk(i, deadline_s);
    f.read_all(host_[i].host(), n, off);
    cuda_check(cudaMemcpyAsync(static_cast<char*>(dst) + off, host_[i].host(), n, cudaMemcpyHostToDevice, stream),
               "copying a gds bounce chunk to the GPU");
    cuda_check(cudaEventRecord(done_[i].get(), stream), "recording a gds bounce chunk's copy");
    pending_[i] = true;
  }
}

// The copy of chunk k + 1 runs while the host writes chunk k.
void Bounce::device_to_file(const CaseFile& f, const void* src, size_t bytes, cudaStream_t stream, double deadline_s) {
  auto enqueue_copy = [&](size_t k) {
    const int i = int(k % 2);
    const size_t off = k * chunk_;
    wait_chunk(i, deadline_s);
    cuda_check(cudaMemcpyAsync(host_[i].host(), static_cast<const char*>(src) + off, std::min(chunk_, bytes - off),
                               cudaMemcpyDeviceToHost, stream),
               "copying a gds bounce chunk from the GPU");
    cuda_check(cudaEventRecord(done_[i].get(), stream), "recording a gds bounce chunk's copy");
    pending_[i] = true;
  };
  const size_t chunks = (bytes + chunk_ - 1) / chunk_;
  if (chunks > 0) enqueue_copy(0);
  for (size_t k = 0; k < chunks; ++k) {
    if (k + 1 < chunks) enqueue_copy(k + 1);
    const int i = int(k % 2);
    wait_chunk(i, deadline_s);
    f.write_all(host_[i].host(), std::min(chunk_, bytes - k * chunk_), k * chunk_);
  }
}

}  // namespace p2pbench::gds
