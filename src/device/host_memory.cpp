#include "device/host_memory.hpp"

#include "device/numa_placement.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace p2pbench {

namespace {

// Memory-policy modes and flags of the kernel's ABI (linux/mempolicy.h; numaif.h is libnuma's
// and may be absent, so the system calls are made directly).
constexpr int kMpolDefault = 0;
constexpr int kMpolBind = 2;
constexpr unsigned long kMpolFNode = 1u << 0;
constexpr unsigned long kMpolFAddr = 1u << 1;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kMaskWords = 16;  // nodes 0..1023
constexpr unsigned long kMaskBits = kMaskWords * 64;

size_t round_up(size_t bytes, size_t unit) { return (bytes + unit - 1) / unit * unit; }

std::vector<unsigned long> mask_of(int node) {
  std::vector<unsigned long> mask(kMaskWords, 0);
  mask.at(size_t(node) / 64) |= 1ul << (size_t(node) % 64);
  return mask;
}

std::string errno_text() { return std::strerror(errno); }

// Binds [addr, addr + bytes) to `node` before anything touches it.
void bind_range(void* addr, size_t bytes, int node, const std::string& what) {
  const auto mask = mask_of(node);
  if (syscall(SYS_mbind, addr, bytes, kMpolBind, mask.data(), kMaskBits, 0) != 0)
    throw std::runtime_error("binding " + what + " to NUMA node " + std::to_string(node) + " (mbind): " + errno_text());
}

// The calling thread's memory policy set to `node` while it lives (the driver's pinned pages
// are allocated by the calling thread), the previous one restored after.
class ThreadPolicy {
 public:
  ThreadPolicy(int node, const std::string& what) : old_mask_(kMaskWords, 0) {
    if (syscall(SYS_get_mempolicy, &old_mode_, old_mask_.data(), kMaskBits, nullptr, 0ul) != 0)
      throw std::runtime_error("reading the thread's memory policy for " + what + ": " + errno_text());
    const auto mask = mask_of(node);
    if (syscall(SYS_set_mempolicy, kMpolBind, mask.data(), kMaskBits) != 0)
      throw std::runtime_error("binding " + what + " to NUMA node " + std::to_string(node) +
                               " (set_mempolicy): " + errno_text());
  }
  ~ThreadPolicy() {
    const bool empty = std::all_of(old_mask_.begin(), old_mask_.end(), [](unsigned long w) { return w == 0; });
    syscall(SYS_set_mempolicy, old_mode_, empty ? nullptr : old_mask_.data(), empty ? 0 : kMaskBits);
  }
  ThreadPolicy(const ThreadPolicy&) = delete;
  ThreadPolicy& operator=(const ThreadPolicy&) = delete;

 private:
  int old_mode_ = kMpolDefault;
  std::vector<unsigned long> old_mask_;
};

// The node of up to 64 pages spread over the range (move_pages with no target nodes only
// reports), else the first page's (get_mempolicy); nullopt where they differ or neither answers.
std::optional<int> node_of_pages(const void* addr, size_t bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t count = std::min<size_t>(64, std::max<size_t>(1, bytes / page));
  std::vector<void*> pages(count);
  std::vector<int> status(count, -1);
  for (size_t i = 0; i < count; ++i)
    pages[i] = const_cast<char*>(static_cast<const char*>(addr)) + (bytes / count) * i / page * page;
  if (syscall(SYS_move_pages, 0, count, pages.data(), nullptr, status.data(), 0) == 0 && status[0] >= 0 &&
      std::all_of(status.begin(), status.end(), [&](int s) { return s == status[0]; }))
    return status[0];
  int node = -1;
  if (syscall(SYS_get_mempolicy, &node, nullptr, 0ul, addr, kMpolFNode | kMpolFAddr) == 0 && node >= 0) return node;
  return std::nullopt;
}

// Whether the node (or the host, unbound) has `pages` free 2 MiB hugetlbfs pages reserved.
bool hugetlb_pages_free(size_t pages, const HostPlacement& placement) {
  const std::string path = placement.bind ? "/sys/devices/system/node/node" + std::to_string(placement.node) +
                                                "/hugepages/hugepages-2048kB/free_hugepages"
                                          : "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";
  std::ifstream in(path);
  size_t free_pages = 0;
  return in >> free_pages && free_pages >= pages;
}

}  // namespace

HostMemory::Mapping::Mapping(Mapping&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

HostMemory::Mapping& HostMemory::Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    if (base_) munmap(base_, bytes_);
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

HostMemory::Mapping::~Mapping() {
  if (base_) munmap(base_, bytes_);
}

HostMemory::HostMemory(HostMemoryKind kind, size_t bytes, const HostPlacement& placement, const std::string& what)
    : kind_(kind) {
  if (kind == HostMemoryKind::kPinned)
    allocate_pinned(bytes, placement, what);
  else
    allocate_mapped(bytes, placement, what);
  const auto node = node_of_pages(host_, bytes);
  // Unbound means one node: the pages are there even where the kernel will not say.
  numa_node_ = node ? node : placement.bind ? std::nullopt : std::optional<int>(placement.node);
}

void HostMemory::allocate_pinned(size_t bytes, const HostPlacement& placement, const std::string& what) {
  std::optional<ThreadPolicy> policy;
  if (placement.bind) policy.emplace(placement.node, what);
  pinned_ = MappedHostBuffer(bytes, what);
  host_ = pinned_.host();
  device_ = pinned_.device();
  pages_ = page_kind_of(host_, bytes);
}

bool HostMemory::map_hugetlb(size_t bytes, const HostPlacement& placement) {
  if (!hugetlb_pages_free(bytes / kHugePage, placement)) return false;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (21 << MAP_HUGE_SHIFT),
                 -1, 0);
  if (p == MAP_FAILED) return false;  // reserved pages taken meanwhile: transparent ones instead
  mapping_ = Mapping(p, bytes);
  host_ = p;
  return true;
}

// Our own anonymous mapping: the page size asked for, bound before the first touch, touched
// (so the pages exist where they were bound), then registered unless pageable.
void HostMemory::allocate_mapped(size_t bytes, const HostPlacement& placement, const std::string& what) {
  const bool huge = kind_ == HostMemoryKind::kHugePages;
  const size_t length = round_up(std::max<size_t>(bytes, 1), huge ? kHugePage : size_t(sysconf(_SC_PAGESIZE)));
  if (!(huge && map_hugetlb(length, placement))) {
    // Transparent huge pages need 2 MiB-aligned ranges: map one huge page more and start at
    // the first boundary.
    const size_t mapped = huge ? length + kHugePage : length;
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mapping " + std::to_string(mapped) + " bytes for " + what + ": " + errno_text());
    mapping_ = Mapping(p, mapped);
    host_ = huge ? reinterpret_cast<void*>(round_up(reinterpret_cast<size_t>(p), kHugePage)) : p;
    // The 4 KiB kinds decline transparent huge pages, so that huge_pages is their contrast
    // whatever the host's THP default ("always" would otherwise give them some).
    madvise(host_, length, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);  // advice: pages_ says what came
  }
  if (placement.bind) bind_range(host_, length, placement.node, what);
  std::memset(host_, 0, length);  // the first touch
  pages_ = page_kind_of(host_, length);
  if (kind_ == HostMemoryKind::kPageable) {
    device_ = host_;
    return;
  }
  registration_ = HostRegistration(host_, length, what);
  device_ = registration_.device();
}

DevicePlacement host_placement_for(int device, NumaPlacement want) {
  char bus[32] = {};
  cuda_check(cudaDeviceGetPCIBusId(bus, sizeof(bus), device), "reading the GPU's PCI bus id for its NUMA node");
  const NumaTopology topology = read_numa_topology(bus);
  const NumaChoice choice = choose_numa_node(want, topology);
  if (!choice.node) return {std::nullopt, choice.skip};
  return {HostPlacement{*choice.node, topology.nodes.size() > 1}, ""};
}

std::string page_kind_of(const void* addr, size_t bytes) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(addr);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;  // a mapping's first line: "lo-hi perms ..."
      continue;
    }
    if (!inside) continue;
    size_t kb = 0;
    if (std::sscanf(line.c_str(), "KernelPageSize: %zu kB", &kb) == 1 && kb == 2048) return "hugetlb_2MiB";
    if (std::sscanf(line.c_str(), "AnonHugePages: %zu kB", &kb) == 1) return kb * 1024 * 2 >= bytes ? "thp" : "4KiB";
  }
  return "4KiB";
}

}  // namespace p2pbench
