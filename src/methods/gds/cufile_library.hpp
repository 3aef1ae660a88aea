// cuFile (GPUDirect Storage) loaded at run time, as NVML is (topology/nvml_library.hpp): the
// binaries build and start where no cuFile is installed, and the gds_* rows then say why they
// were skipped. Only what the gds methods call is declared, with the ABI of the documented
// cufile.h of GDS 1.x (CUDA 12.x/13.x; the GPU node's cuFile is 1.15.1): CUfileError_t,
// CUfileDescr_t, CUfileDrvProps_t and the functions below.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace p2pbench::gds {

// CUfileError_t: a CUfileOpError (0 success, 5001... cuFile's own) and a CUresult.
struct CuFileError {
  int err;
  int cu_err;
};

// CUfileDrvProps_t.
struct CuFileDriverProps {
  struct {
    unsigned int major_version;  // nvidia_fs' version (0: no nvidia_fs)
    unsigned int minor_version;
    size_t poll_thresh_size;
    size_t max_direct_io_size;
    unsigned int dstatusflags;   // CUfileDriverStatusFlags_t bits: filesystems GDS supports here
    unsigned int dcontrolflags;  // CUfileDriverControlFlags_t bits: poll mode (0), allow compat mode (1)
  } nvfs;
  unsigned int fflags;
  unsigned int max_device_cache_size;
  unsigned int per_buffer_cache_size;
  unsigned int max_device_pinned_mem_size;
  unsigned int max_batch_io_size;
  unsigned int max_batch_io_timeout_msecs;
};

constexpr int kCuFileSuccess = 0;
constexpr int kCuFileDriverAlreadyOpen = 5026;
constexpr unsigned kAllowCompatModeBit = 1u << 1;  // CU_FILE_ALLOW_COMPAT_MODE

// "5027 (CU_FILE_HANDLE_NOT_REGISTERED)", with the CUresult where cuFile gives one.
std::string error_text(CuFileError e);
// A negative return of cuFileRead/cuFileWrite: -errno (-1: errno) or -CUfileOpError.
std::string io_error_text(ssize_t ret, int saved_errno);

// The library with its driver open. The driver stays open and the library loaded for the rest
// of the process: libcufile runs threads of its own, which must not outlive its code, and closing
// and reopening the driver is not something every version does cleanly. Registrations are RAII
// (FileHandle, BufferRegistration below).
class CuFileLibrary {
 public:
  // Loads libcufile.so.0 (else libcufile.so) and opens its driver; null with `why` on failure.
  static std::shared_ptr<CuFileLibrary> open(std::string& why);

  std::optional<CuFileDriverProps> properties(std::string& why) const;
  // cuFileHandleRegister of an open descriptor: the handle, or null with `why`.
  void* register_handle(int fd, std::string& why) const;
  void deregister_handle(void* handle) const;
  // cuFileBufRegister of device memory: nullopt on success, else why.
  std::optional<std::string> register_buffer(const void* base, size_t bytes) const;
  void deregister_buffer(const void* base) const;
  ssize_t read(void* handle, void* base, size_t size, off_t file_offset, off_t buffer_offset) const;
  ssize_t write(void* handle, const void* base, size_t size, off_t file_offset, off_t buffer_offset) const;

  struct Api;  // the function table (cufile_library.cpp)
  explicit CuFileLibrary(std::unique_ptr<Api> api);
  ~CuFileLibrary();

 private:
  std::unique_ptr<Api> api_;
};

// A descriptor registered with cuFile, deregistered on destruction.
class FileHandle {
 public:
  FileHandle() = default;
  FileHandle(std::shared_ptr<CuFileLibrary> lib, void* handle) : lib_(std::move(lib)), handle_(handle) {}
  FileHandle(FileHandle&& o) noexcept { *this = std::move(o); }
  FileHandle& operator=(FileHandle&& o) noexcept;
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle();
  void* get() const { return handle_; }

 private:
  std::shared_ptr<CuFileLibrary> lib_;
  void* handle_ = nullptr;
};

// Device memory registered with cuFile (cuFileBufRegister), deregistered on destruction.
class BufferRegistration {
 public:
  BufferRegistration() = default;
  BufferRegistration(std::shared_ptr<CuFileLibrary> lib, const void* base) : lib_(std::move(lib)), base_(base) {}
  BufferRegistration(BufferRegistration&& o) noexcept { *this = std::move(o); }
  BufferRegistration& operator=(BufferRegistration&& o) noexcept;
  BufferRegistration(const BufferRegistration&) = delete;
  BufferRegistration& operator=(const BufferRegistration&) = delete;
  ~BufferRegistration();
  const void* base() const { return base_; }

 private:
  std::shared_ptr<CuFileLibrary> lib_;
  const void* base_ = nullptr;
};

}  // namespace p2pbench::gds
