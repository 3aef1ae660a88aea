// The file of a gds case and the pinned host bounce between it and GPU memory (POSIX I/O).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/cuda_raii.hpp"

namespace p2pbench::gds {

// The case's file in its directory, opened with O_DIRECT where the filesystem takes it (tmpfs
// may not: then through the page cache, which the row's engine_mode says); closed and removed
// on destruction.
class CaseFile {
 public:
  // Creates <directory>/p2pbench-gds-<pid>-<rank>-<tag>.bin; nullopt with `why` on failure.
  static std::optional<CaseFile> create(const std::string& directory, int rank, const std::string& tag, std::string& why);
  CaseFile(CaseFile&& o) noexcept { *this = std::move(o); }
  CaseFile& operator=(CaseFile&& o) noexcept;
  CaseFile(const CaseFile&) = delete;
  CaseFile& operator=(const CaseFile&) = delete;
  ~CaseFile();

  int fd() const { return fd_; }
  bool direct_io() const { return direct_io_; }
  const std::string& path() const { return path_; }
  const std::string& filesystem() const { return filesystem_; }  // "ext4", "tmpfs", ... or "0x<magic>"
  const std::string& cached_because() const { return cached_because_; }  // why not O_DIRECT ("" : it is)

  // Whole-range pread/pwrite, retried on short transfers and EINTR; throws RuntimeFailure.
  void read_all(void* host, size_t bytes, uint64_t file_offset) const;
  void write_all(const void* host, size_t bytes, uint64_t file_offset) const;

 private:
  CaseFile() = default;
  int fd_ = -1;
  bool direct_io_ = false;
  std::string path_, filesystem_, cached_because_;
};

// Two pinned host chunks between the file and GPU memory, pipelined: while one chunk's copy
// runs on the stream, the host reads (writes) the other. O_DIRECT wants the host buffer, the
// length and the offset aligned: the chunks are page-aligned and the case's bytes a multiple of
// kAlignment.
class Bounce {
 public:
  static constexpr size_t kChunkBytes = size_t(16) << 20;
  static constexpr size_t kAlignment = 4096;
  explicit Bounce(size_t largest_transfer);
  // The file's [0, bytes) into device memory `dst`; leaves the last copies on `stream`.
  void file_to_device(const CaseFile& f, void* dst, size_t bytes, cudaStream_t stream, double deadline_s);
  // Device memory `src` into the file's [0, bytes); returns when the file holds it.
  void device_to_file(const CaseFile& f, const void* src, size_t bytes, cudaStream_t stream, double deadline_s);

 private:
  size_t chunk_;
  MappedHostBuffer host_[2];
  Event done_[2];
  bool pending_[2] = {false, false};
  void wait_chunk(int i, double deadline_s);
};

}  // namespace p2pbench::gds
