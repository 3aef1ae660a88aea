#include "methods/gds/cufile_library.hpp"

#include <dlfcn.h>

#include <cstring>
#include <map>

#include "common/library_symbol.hpp"

namespace p2pbench::gds {

// The ABI types below are named at namespace scope, not in an anonymous namespace: CuFileLibrary's
// Api (declared in the header) holds pointers of these types.

// CUfileDescr_t: the handle type (CU_FILE_HANDLE_TYPE_OPAQUE_FD = 1), a union of an fd and a
// pointer, and the user-space filesystem operations (null for a POSIX descriptor).
struct CuFileDescr {
  int type;
  union {
    int fd;
    void* handle;
  } handle;
  const void* fs_ops;
};
constexpr int kHandleTypeOpaqueFd = 1;

using DriverOpenFn = CuFileError (*)();
using DriverGetPropertiesFn = CuFileError (*)(CuFileDriverProps*);
using HandleRegisterFn = CuFileError (*)(void** handle, CuFileDescr* descr);
using HandleDeregisterFn = void (*)(void* handle);
using BufRegisterFn = CuFileError (*)(const void* base, size_t length, int flags);
using BufDeregisterFn = CuFileError (*)(const void* base);
using ReadFn = ssize_t (*)(void* handle, void* base, size_t size, off_t file_offset, off_t buffer_offset);
using WriteFn = ssize_t (*)(void* handle, const void* base, size_t size, off_t file_offset, off_t buffer_offset);

namespace {

// CUfileOpError's names (cufile.h), for the errors a run may meet.
const char* error_name(int code) {
  static const std::map<int, const char*> names = {
      {5001, "CU_FILE_DRIVER_NOT_INITIALIZED"}, {5002, "CU_FILE_DRIVER_INVALID_PROPS"},
      {5003, "CU_FILE_DRIVER_UNSUPPORTED_LIMIT"}, {5004, "CU_FILE_DRIVER_VERSION_MISMATCH"},
      {5005, "CU_FILE_DRIVER_VERSION_READ_ERROR"}, {5006, "CU_FILE_DRIVER_CLOSING"},
      {5007, "CU_FILE_PLATFORM_NOT_SUPPORTED"}, {5008, "CU_FILE_IO_NOT_SUPPORTED"},
      {5009, "CU_FILE_DEVICE_NOT_SUPPORTED"}, {5010, "CU_FILE_NVFS_DRIVER_ERROR"},
      {5011, "CU_FILE_CUDA_DRIVER_ERROR"}, {5012, "CU_FILE_CUDA_POINTER_INVALID"},
      {5013, "CU_FILE_CUDA_MEMORY_TYPE_INVALID"}, {5014, "CU_FILE_CUDA_POINTER_RANGE_ERROR"},
      {5015, "CU_FILE_CUDA_CONTEXT_MISMATCH"}, {5016, "CU_FILE_INVALID_MAPPING_SIZE"},
      {5017, "CU_FILE_INVALID_MAPPING_RANGE"}, {5018, "CU_FILE_INVALID_FILE_TYPE"},
      {5019, "CU_FILE_INVALID_FILE_OPEN_FLAG"}, {5020, "CU_FILE_DIO_NOT_SET"},
      {5022, "CU_FILE_INVALID_VALUE"}, {5023, "CU_FILE_MEMORY_ALREADY_REGISTERED"},
      {5024, "CU_FILE_MEMORY_NOT_REGISTERED"}, {5025, "CU_FILE_PERMISSION_DENIED"},
      {5026, "CU_FILE_DRIVER_ALREADY_OPEN"}, {5027, "CU_FILE_HANDLE_NOT_REGISTERED"},
      {5028, "CU_FILE_HANDLE_ALREADY_REGISTERED"}, {5029, "CU_FILE_DEVICE_NOT_FOUND"},
      {5030, "CU_FILE_INTERNAL_ERROR"}, {5031, "CU_FILE_GETNEWFD_FAILED"},
      {5033, "CU_FILE_NVFS_SETUP_ERROR"}, {5034, "CU_FILE_IO_DISABLED"}};
  const auto it = names.find(code);
  return it == names.end() ? "unnamed cuFile error" : it->second;
}

}  // namespace

struct CuFileLibrary::Api {
  DriverOpenFn DriverOpen = nullptr;
  DriverGetPropertiesFn DriverGetProperties = nullptr;
  HandleRegisterFn HandleRegister = nullptr;
  HandleDeregisterFn HandleDeregister = nullptr;
  BufRegisterFn BufRegister = nullptr;
  BufDeregisterFn BufDeregister = nullptr;
  ReadFn Read = nullptr;
  WriteFn Write = nullptr;
};

std::string error_text(CuFileError e) {
  std::string text = std::to_string(e.err) + " (" + error_name(e.err) + ")";
  if (e.cu_err != 0) text += ", CUresult " + std::to_string(e.cu_err);
  return text;
}

std::string io_error_text(ssize_t ret, int saved_errno) {
  if (ret == -1) return std::string("errno ") + std::to_string(saved_errno) + " (" + std::strerror(saved_errno) + ")";
  const int code = int(-ret);
  if (code >= 5000) return error_text({code, 0});
  return std::string("errno ") + std::to_string(code) + " (" + std::strerror(code) + ")";
}

std::shared_ptr<CuFileLibrary> CuFileLibrary::open(std::string& why) {
  void* lib = dlopen("libcufile.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcufile.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    why = std::string("cuFile is not installed here (cannot load libcufile.so.0 or libcufile.so: ") +
          (e ? e : "unknown dlopen error") + ")";
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  load_symbol(lib, api->DriverOpen, "cuFileDriverOpen");
  load_symbol(lib, api->DriverGetProperties, "cuFileDriverGetProperties");
  load_symbol(lib, api->HandleRegister, "cuFileHandleRegister");
  load_symbol(lib, api->HandleDeregister, "cuFileHandleDeregister");
  load_symbol(lib, api->BufRegister, "cuFileBufRegister");
  load_symbol(lib, api->BufDeregister, "cuFileBufDeregister");
  load_symbol(lib, api->Read, "cuFileRead");
  load_symbol(lib, api->Write, "cuFileWrite");
  if (!api->DriverOpen || !api->DriverGetProperties || !api->HandleRegister || !api->HandleDeregister ||
      !api->BufRegister || !api->BufDeregister || !api->Read || !api->Write) {
    why = "libcufile lacks one of cuFileDriverOpen, cuFileDriverGetProperties, cuFileHandle(De)Register, "
          "cuFileBuf(De)Register, cuFileRead, cuFileWrite";
    return nullptr;  // the library stays loaded: see the class comment
  }
  const CuFileError opened = api->DriverOpen();
  if (opened.err != kCuFileSuccess && opened.err != kCuFileDriverAlreadyOpen) {
    why = "cuFileDriverOpen failed: " + error_text(opened);
    return nullptr;
  }
  return std::make_shared<CuFileLibrary>(std::move(api));
}

CuFileLibrary::CuFileLibrary(std::unique_ptr<Api> api) : api_(std::move(api)) {}
CuFileLibrary::~CuFileLibrary() = default;

std::optional<CuFileDriverProps> CuFileLibrary::properties(std::string& why) const {
  CuFileDriverProps props{};
  const CuFileError e = api_->DriverGetProperties(&props);
  if (e.err != kCuFileSuccess) {
    why = "cuFileDriverGetProperties failed: " + error_text(e);
    return std::nullopt;
  }
  return props;
}

void* CuFileLibrary::register_handle(int fd, std::string& why) const {
  CuFileDescr descr{};
  descr.type = kHandleTypeOpaqueFd;
  descr.handle.fd = fd;
  void* handle = nullptr;
  const CuFileError e = api_->HandleRegister(&handle, &descr);
  if (e.err != kCuFileSuccess) {
    why = "cuFileHandleRegister failed: " + error_text(e);
    return nullptr;
  }
  return handle;
}

void CuFileLibrary::deregister_handle(void* handle) const { api_->HandleDeregister(handle); }

std::optional<std::string> CuFileLibrary::register_buffer(const void* base, size_t bytes) const {
  const CuFileError e = api_->BufRegister(base, bytes, 0);
  if (e.err == kCuFileSuccess) return std::nullopt;
  return "cuFileBufRegister of " + std::to_string(bytes) + " bytes failed: " + error_text(e);
}

void CuFileLibrary::deregister_buffer(const void* base) const { api_->BufDeregister(base); }

ssize_t CuFileLibrary::read(void* handle, void* base, size_t size, off_t file_offset, off_t buffer_offset) const {
  return api_->Read(handle, base, size, file_offset, buffer_offset);
}

ssize_t CuFileLibrary::write(void* handle, const void* base, size_t size, off_t file_offset, off_t buffer_offset) const {
  return api_->Write(handle, base, size, file_offset, buffer_offset);
}

FileHandle& FileHandle::operator=(FileHandle&& o) noexcept {
  if (this != &o) {
    if (handle_) lib_->deregister_handle(handle_);
    lib_ = std::move(o.lib_);
    handle_ = o.handle_;
    o.handle_ = nullptr;
  }
  return *this;
}

FileHandle::~FileHandle() {
  if (handle_) lib_->deregister_handle(handle_);
}

BufferRegistration& BufferRegistration::operator=(BufferRegistration&& o) noexcept {
  if (this != &o) {
    if (base_) lib_->deregister_buffer(base_);
    lib_ = std::move(o.lib_);
    base_ = o.base_;
    o.base_ = nullptr;
  }
  return *this;
}

BufferRegistration::~BufferRegistration() {
  if (base_) lib_->deregister_buffer(base_);
}

}  // namespace p2pbench::gds
