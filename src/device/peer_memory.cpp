#include "device/peer_memory.hpp"

#include <cuda.h>  // types only: every driver function is fetched at run time
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/cuda_raii.hpp"
#include "common/driver_entry_point.hpp"
#include "device/descriptor_passing.hpp"

// Older C library headers lack the names; the numbers are the same on every architecture.
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // Linux 5.3
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438  // Linux 5.6
#endif

namespace p2pbench {

namespace {

// ---- legacy: cudaMalloc and CUDA IPC, as before the allocators existed.

std::string ipc_handle_bytes(void* ptr, const std::string& what) {
  cudaIpcMemHandle_t handle;
  cuda_check(cudaIpcGetMemHandle(&handle, ptr), "exporting the IPC handle of " + what);
  return std::string(reinterpret_cast<const char*>(&handle), sizeof handle);
}

cudaIpcMemHandle_t ipc_handle_from(const std::string& bytes) {
  cudaIpcMemHandle_t handle;
  if (bytes.size() != sizeof handle) throw RuntimeFailure("received an IPC handle of the wrong size");
  std::memcpy(&handle, bytes.data(), sizeof handle);
  return handle;
}

class LegacyMemory final : public DeviceMemory {
 public:
  LegacyMemory(size_t bytes, const std::string& what, bool exported) : buffer_(bytes, what) {
    ptr_ = buffer_.get();
    size_ = bytes;
    if (exported) handle_ = ipc_handle_bytes(ptr_, what);
  }

 private:
  DeviceBuffer buffer_;
};

class LegacyMapping final : public DeviceMemory {
 public:
  LegacyMapping(const std::string& handle, const std::string& what) : mapping_(ipc_handle_from(handle), what) {
    ptr_ = mapping_.get();
  }

 private:
  IpcMapping mapping_;
};

class LegacyPeerMemory final : public PeerMemory {
 public:
  Allocator kind() const override { return Allocator::kLegacy; }
  size_t handle_size() const override { return sizeof(cudaIpcMemHandle_t); }
  std::unique_ptr<DeviceMemory> allocate(size_t bytes, const std::string& what, bool exported) const override {
    return std::make_unique<LegacyMemory>(bytes, what, exported);
  }
  std::unique_ptr<DeviceMemory> map_peer(const std::string& handle, const std::string& what) const override {
    return std::make_unique<LegacyMapping>(handle, what);
  }
};

// ---- vmm and fabric: the driver's virtual memory management calls.

struct VmmDriver {
  using DeviceGet = CUresult(CUDAAPI*)(CUdevice*, int);
  using DeviceGetAttribute = CUresult(CUDAAPI*)(int*, CUdevice_attribute, CUdevice);
  using Granularity = CUresult(CUDAAPI*)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
  using Create =
      CUresult(CUDAAPI*)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long);
  using Release = CUresult(CUDAAPI*)(CUmemGenericAllocationHandle);
  using Reserve = CUresult(CUDAAPI*)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  using RangeCall = CUresult(CUDAAPI*)(CUdeviceptr, size_t);  // cuMemAddressFree, cuMemUnmap
  using Map = CUresult(CUDAAPI*)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  using SetAccess = CUresult(CUDAAPI*)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  using Export = CUresult(CUDAAPI*)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType, unsigned long long);
  using Import = CUresult(CUDAAPI*)(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType);

  DeviceGet device_get = driver_entry_point<DeviceGet>("cuDeviceGet", 2000);
  DeviceGetAttribute device_attribute = driver_entry_point<DeviceGetAttribute>("cuDeviceGetAttribute", 2000);
  Granularity granularity = driver_entry_point<Granularity>("cuMemGetAllocationGranularity", 10020);
  Create create = driver_entry_point<Create>("cuMemCreate", 10020);
  Release release = driver_entry_point<Release>("cuMemRelease", 10020);
  Reserve reserve = driver_entry_point<Reserve>("cuMemAddressReserve", 10020);
  RangeCall address_free = driver_entry_point<RangeCall>("cuMemAddressFree", 10020);
  Map map = driver_entry_point<Map>("cuMemMap", 10020);
  RangeCall unmap = driver_entry_point<RangeCall>("cuMemUnmap", 10020);
  SetAccess set_access = driver_entry_point<SetAccess>("cuMemSetAccess", 10020);
  Export export_handle = driver_entry_point<Export>("cuMemExportToShareableHandle", 10020);
  Import import_handle = driver_entry_point<Import>("cuMemImportFromShareableHandle", 10020);
};

// Fetched on first use, once per process; a driver without these functions throws
// DriverFailure (make_peer_memory turns it into the reason there is no mapping).
const VmmDriver& vmm_driver() {
  static const VmmDriver driver;
  return driver;
}

// Destructors never throw: a failed release is reported on stderr. A driver already shutting
// down (the process exits) has released everything itself.
void report_release(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_DEINITIALIZED) return;
  std::fprintf(stderr, "p2pbench: warning: %s failed: %s\n", what, driver_error_name(r).c_str());
}

// A descriptor of this process, closed at destruction.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~FileDescriptor() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// An allocation handle, own or imported, released at destruction. Memory mapped from it stays
// until it is unmapped: each mapping holds a reference of its own.
class AllocationHandle {
 public:
  AllocationHandle() = default;
  explicit AllocationHandle(CUmemGenericAllocationHandle h) : h_(h), held_(true) {}
  AllocationHandle(AllocationHandle&& o) noexcept : h_(o.h_), held_(std::exchange(o.held_, false)) {}
  AllocationHandle& operator=(AllocationHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = o.h_;
      held_ = std::exchange(o.held_, false);
    }
    return *this;
  }
  ~AllocationHandle() { reset(); }
  CUmemGenericAllocationHandle get() const { return h_; }
  void reset() {
    if (held_) report_release(vmm_driver().release(h_), "releasing an allocation handle (cuMemRelease)");
    held_ = false;
  }

 private:
  CUmemGenericAllocationHandle h_ = 0;
  bool held_ = false;
};

// A range of the device's address space, undone at destruction: a reservation (cuMemAddressFree)
// or a mapping (cuMemUnmap), which take the same arguments.
class AddressRange {
 public:
  AddressRange() = default;
  AddressRange(CUdeviceptr ptr, size_t size, VmmDriver::RangeCall undo, const char* what)
      : ptr_(ptr), size_(size), undo_(undo), what_(what) {}
  AddressRange(AddressRange&& o) noexcept
      : ptr_(std::exchange(o.ptr_, 0)), size_(o.size_), undo_(o.undo_), what_(o.what_) {}
  AddressRange& operator=(AddressRange&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, 0);
      size_ = o.size_;
      undo_ = o.undo_;
      what_ = o.what_;
    }
    return *this;
  }
  ~AddressRange() { reset(); }
  void reset() {
    if (ptr_) report_release(undo_(ptr_, size_), what_);
    ptr_ = 0;
  }

 private:
  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
  VmmDriver::RangeCall undo_ = nullptr;
  const char* what_ = "";
};

// Memory mapped through the VMM calls: an own allocation (its handle kept, maybe exported as a
// descriptor) or a peer's (its imported handle released once mapped). The members are released
// in reverse order: the descriptor closed, the range unmapped, the handle released, the
// reservation given back.
class VmmMemory final : public DeviceMemory {
 public:
  void set(CUdeviceptr ptr, size_t bytes, std::string handle) {
    ptr_ = reinterpret_cast<void*>(ptr);
    size_ = bytes;
    handle_ = std::move(handle);
  }
  AddressRange reserved;
  AllocationHandle allocation;
  AddressRange mapped;
  FileDescriptor exported;
};

class VmmPeerMemory final : public PeerMemory {
 public:
  VmmPeerMemory(Allocator kind, int device);
  Allocator kind() const override { return kind_; }
  size_t handle_size() const override { return kind_ == Allocator::kFabric ? kFabricHandleBytes : kFdHandleBytes; }
  size_t granularity() const override { return granularity_; }
  std::unique_ptr<DeviceMemory> allocate(size_t bytes, const std::string& what, bool exported) const override;
  std::unique_ptr<DeviceMemory> map_peer(const std::string& handle, const std::string& what) const override;
  void stop_sharing() override { server_.reset(); }

 private:
  void check(CUresult r, const char* call, const std::string& doing) const;
  void check_support() const;
  CUmemAllocationProp properties(bool exported) const;
  CUdeviceptr map_here(VmmMemory& m, CUmemGenericAllocationHandle h, size_t size, const std::string& doing) const;
  std::string export_handle(VmmMemory& m, size_t size, const std::string& what) const;
  AllocationHandle import_fd(const std::string& handle, const std::string& doing, size_t& size) const;
  AllocationHandle import_fabric(const std::string& handle, const std::string& doing, size_t& size) const;

  const VmmDriver& d_;
  Allocator kind_;
  CUdevice device_ = 0;
  size_t granularity_ = 0;
  // vmm: serves the exported descriptors to peers that pidfd_getfd fails for. Null for fabric,
  // after stop_sharing(), or where no socket could be made (the handles then carry socket id 0
  // and peers say why pidfd_getfd failed alone).
  uint64_t socket_id_ = 0;
  std::unique_ptr<DescriptorServer> server_;
};

VmmPeerMemory::VmmPeerMemory(Allocator kind, int device) : d_(vmm_driver()), kind_(kind) {
  // The driver calls act on the current context: make sure the runtime has made the device's
  // primary context current on this thread (a no-op where it already has).
  cuda_check(cudaFree(nullptr),
             "making GPU " + std::to_string(device) + "'s context current for the driver's memory calls");
  check(d_.device_get(&device_, device), "cuDeviceGet", "finding GPU " + std::to_string(device));
  check_support();
  const CUmemAllocationProp prop = properties(true);
  check(d_.granularity(&granularity_, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), "cuMemGetAllocationGranularity",
        "reading the recommended allocation granularity");
  if (kind_ != Allocator::kVmm) return;
  try {
    const uint64_t id = random_socket_id();
    server_ = std::make_unique<DescriptorServer>(descriptor_socket_name(int32_t(getpid()), id));
    socket_id_ = id;
  } catch (const RuntimeFailure& e) {  // pidfd_getfd may still work: the peers try it first
    std::fprintf(stderr, "p2pbench: warning: vmm handles: no descriptor socket (%s): peers can take this process's "
                 "descriptors only with pidfd_getfd\n", e.what());
  }
}

void VmmPeerMemory::check(CUresult r, const char* call, const std::string& doing) const {
  if (r != CUDA_SUCCESS) throw PeerMemoryUnavailable(driver_call_failure(kind_, call, driver_error_name(r), doing));
}

// Asked before any allocation, so that an unsupported GPU is named as such rather than by the
// error of the first call that fails.
void VmmPeerMemory::check_support() const {
  // Each feature this allocator needs, with the attribute that says whether the GPU has it.
  struct Need {
    CUdevice_attribute attribute;
    const char* name;
    const char* feature;
  };
  const Need vmm{CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                 "CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
                 "virtual memory management (cuMemCreate, cuMemMap)"};
  const Need fabric{CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED,
                    "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED", "fabric handles (CU_MEM_HANDLE_TYPE_FABRIC)"};
  const Need fd{CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED",
                "file descriptor handles (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)"};
  for (const Need& need : {vmm, kind_ == Allocator::kFabric ? fabric : fd}) {
    int value = 0;
    check(d_.device_attribute(&value, need.attribute, device_), "cuDeviceGetAttribute",
          std::string("reading ") + need.name);
    if (value == 0) throw PeerMemoryUnavailable(unsupported_feature(kind_, need.feature, need.name));
  }
}

// Pinned memory of this device. The handle type is asked for only where the memory is
// exported: a fabric allocation is refused without an IMEX channel, plain VMM memory is not.
CUmemAllocationProp VmmPeerMemory::properties(bool exported) const {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device_;
  if (exported)
    prop.requestedHandleTypes =
        kind_ == Allocator::kFabric ? CU_MEM_HANDLE_TYPE_FABRIC : CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

// Reserves `size` bytes of address space, maps the allocation there and lets this device read
// and write it: the same for own memory and a peer's (whose memory is another GPU's, or this
// one's when ranks share a GPU).
CUdeviceptr VmmPeerMemory::map_here(VmmMemory& m, CUmemGenericAllocationHandle h, size_t size,
                                    const std::string& doing) const {
  CUdeviceptr ptr = 0;
  check(d_.reserve(&ptr, size, granularity_, 0, 0), "cuMemAddressReserve", doing);
  m.reserved = AddressRange(ptr, size, d_.address_free, "giving back a reserved address range (cuMemAddressFree)");
  check(d_.map(ptr, size, 0, h, 0), "cuMemMap", doing);
  m.mapped = AddressRange(ptr, size, d_.unmap, "unmapping device memory (cuMemUnmap)");
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device_;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  check(d_.set_access(ptr, size, &access, 1), "cuMemSetAccess", doing);
  return ptr;
}

std::unique_ptr<DeviceMemory> VmmPeerMemory::allocate(size_t bytes, const std::string& what, bool exported) const {
  auto m = std::make_unique<VmmMemory>();
  const size_t size = round_up_to_granularity(bytes, granularity_);
  const std::string doing = "allocating " + std::to_string(size) + " bytes for " + what;
  const CUmemAllocationProp prop = properties(exported);
  CUmemGenericAllocationHandle h = 0;
  check(d_.create(&h, size, &prop, 0), "cuMemCreate", doing);
  m->allocation = AllocationHandle(h);
  const CUdeviceptr ptr = map_here(*m, h, size, doing);
  m->set(ptr, bytes, exported ? export_handle(*m, size, what) : std::string());
  return m;
}

// The handle peers map `m` from. The descriptor stays open in this process until the memory is
// freed: peers take their copy of it (pidfd_getfd) while the set-up runs.
std::string VmmPeerMemory::export_handle(VmmMemory& m, size_t size, const std::string& what) const {
  if (kind_ == Allocator::kFabric) {
    CUmemFabricHandle fabric{};
    check(d_.export_handle(&fabric, m.allocation.get(), CU_MEM_HANDLE_TYPE_FABRIC, 0), "cuMemExportToShareableHandle",
          "exporting " + what + " as a fabric handle");
    FabricHandle h;
    h.bytes = size;
    std::memcpy(h.data.data(), fabric.data, h.data.size());
    return pack_fabric_handle(h);
  }
  int fd = -1;
  check(d_.export_handle(&fd, m.allocation.get(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        "cuMemExportToShareableHandle", "exporting " + what + " as a file descriptor");
  m.exported = FileDescriptor(fd);
  if (server_) server_->offer(fd);
  return pack_fd_handle({int32_t(getpid()), int32_t(fd), size, socket_id_});
}

std::unique_ptr<DeviceMemory> VmmPeerMemory::map_peer(const std::string& handle, const std::string& what) const {
  auto m = std::make_unique<VmmMemory>();
  const std::string doing = "mapping " + what;
  size_t size = 0;
  AllocationHandle imported =
      kind_ == Allocator::kFabric ? import_fabric(handle, doing, size) : import_fd(handle, doing, size);
  const CUdeviceptr ptr = map_here(*m, imported.get(), size, doing);
  imported.reset();  // the mapping holds the memory now; no handle of the peer's is kept
  m->set(ptr, size, std::string());
  return m;
}

// The peer's descriptor, copied into this process, imported, then closed: the imported handle
// does not need it.
AllocationHandle VmmPeerMemory::import_fd(const std::string& handle, const std::string& doing, size_t& size) const {
  const FdHandle h = unpack_fd_handle(handle);
  if (h.bytes == 0) throw RuntimeFailure("received a vmm handle of an empty allocation (" + doing + ")");
  const FileDescriptor fd(take_or_receive_descriptor(h, doing));
  CUmemGenericAllocationHandle imported = 0;
  check(d_.import_handle(&imported, reinterpret_cast<void*>(static_cast<uintptr_t>(fd.get())),
                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        "cuMemImportFromShareableHandle", doing);
  size = size_t(h.bytes);
  return AllocationHandle(imported);
}

AllocationHandle VmmPeerMemory::import_fabric(const std::string& handle, const std::string& doing, size_t& size) const {
  const FabricHandle h = unpack_fabric_handle(handle);
  if (h.bytes == 0) throw RuntimeFailure("received a fabric handle of an empty allocation (" + doing + ")");
  CUmemFabricHandle fabric{};
  std::memcpy(fabric.data, h.data.data(), h.data.size());
  CUmemGenericAllocationHandle imported = 0;
  check(d_.import_handle(&imported, &fabric, CU_MEM_HANDLE_TYPE_FABRIC), "cuMemImportFromShareableHandle", doing);
  size = size_t(h.bytes);
  return AllocationHandle(imported);
}

}  // namespace

namespace {

// A copy of descriptor `fd` of process `pid`, or -1 with the failing call and its errno.
struct Taken {
  int fd = -1;
  const char* call = "";
  int err = 0;
};

Taken pidfd_take(int32_t pid, int32_t fd) {
  const FileDescriptor pidfd(int(syscall(SYS_pidfd_open, pid_t(pid), 0u)));
  if (pidfd.get() < 0) return {-1, "pidfd_open", errno};  // errno before anything can change it
  const int taken = int(syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0u));
  if (taken < 0) return {-1, "pidfd_getfd", errno};
  return {taken, "", 0};
}

}  // namespace

// pidfd_getfd copies the descriptor straight out of the exporting process: no socket to set up
// between the ranks, at the price of ptrace access to the exporter (pidfd_failure says which).
int take_descriptor(int32_t pid, int32_t fd, const std::string& doing) {
  const Taken t = pidfd_take(pid, fd);
  if (t.fd < 0) throw PeerMemoryUnavailable(pidfd_failure(t.call, t.err, pid, fd, read_ptrace_scope(), doing));
  return t.fd;
}

bool socket_can_replace_pidfd(int err) { return err == EPERM || err == EACCES || err == ENOSYS; }

// pidfd_getfd first: it works across network namespaces and needs nothing of the exporter.
// Where it is refused for want of ptrace access (Yama ptrace_scope 1, the common default) the
// exporter's socket hands the descriptor over instead, which needs no privilege.
int take_or_receive_descriptor(const FdHandle& h, const std::string& doing) {
  const Taken t = pidfd_take(h.pid, h.fd);
  if (t.fd >= 0) return t.fd;
  if (!socket_can_replace_pidfd(t.err))
    throw PeerMemoryUnavailable(pidfd_failure(t.call, t.err, h.pid, h.fd, read_ptrace_scope(), doing));
  std::string instead = "the exporter offers no descriptor socket";
  if (h.socket_id != 0) {
    try {
      return receive_descriptor(descriptor_socket_name(h.pid, h.socket_id), h.fd, kDescriptorSocketDeadlineS);
    } catch (const RuntimeFailure& e) {
      instead = e.what();
    }
  }
  throw PeerMemoryUnavailable(pidfd_failure(t.call, t.err, h.pid, h.fd, read_ptrace_scope(),
                                            doing + "; over the exporter's socket (SCM_RIGHTS) instead: " + instead));
}

std::unique_ptr<PeerMemory> make_peer_memory(Allocator allocator, int device) {
  if (allocator == Allocator::kLegacy) return std::make_unique<LegacyPeerMemory>();
  try {
    return std::make_unique<VmmPeerMemory>(allocator, device);
  } catch (const DriverFailure& e) {  // a driver without the VMM functions
    throw PeerMemoryUnavailable(std::string(to_string(allocator)) + " handles: " + e.what());
  }
}

std::unique_ptr<DeviceMemory> plain_device_memory(size_t bytes, const std::string& what) {
  return std::make_unique<LegacyMemory>(bytes, what, false);
}

}  // namespace p2pbench
