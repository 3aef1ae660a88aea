// The host buffer of a host-link case, of one kind (vocab/host_memory_kinds.hpp) on one NUMA
// node: every kind's allocation in one place, with what the host actually gave (page size,
// node) for the row. Owns its memory; not copyable.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "common/cuda_raii.hpp"
#include "vocab/host_memory_kinds.hpp"

namespace p2pbench {

// Where the buffer goes: `node`, bound with mbind / set_mempolicy before the first touch where
// `bind` (false on a host of one node: nothing to choose, and containers often forbid the calls).
struct HostPlacement {
  int node = 0;
  bool bind = false;
};

// What a case asks its group for: a buffer of at least `bytes` of `kind` on `numa`'s node.
struct HostBufferRequest {
  size_t bytes = 0;
  HostMemoryKind kind = HostMemoryKind::kPinned;
  NumaPlacement numa = NumaPlacement::kLocal;
  bool operator==(const HostBufferRequest& o) const { return bytes == o.bytes && kind == o.kind && numa == o.numa; }
};

class HostMemory {
 public:
  HostMemory(HostMemoryKind kind, size_t bytes, const HostPlacement& placement, const std::string& what);
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  HostMemoryKind kind() const { return kind_; }
  void* host() const { return host_; }
  // What copies (and, where accessible, kernels) address: the device mapping of pinned or
  // registered memory; pageable memory's own host address (the driver stages it).
  void* device() const { return device_; }
  // Whether kernels may read and write device(): every kind but pageable.
  bool device_accessible() const { return kind_ != HostMemoryKind::kPageable; }
  // "hugetlb_2MiB", "thp" (at least half the buffer in transparent huge pages) or "4KiB".
  const std::string& pages() const { return pages_; }
  // The node the pages are on, checked after the first touch; nullopt where they span nodes or
  // the kernel would not say.
  std::optional<int> numa_node() const { return numa_node_; }

 private:
  // An anonymous mmap, unmapped on destruction (movable, like the CUDA handles).
  class Mapping {
   public:
    Mapping() = default;
    Mapping(void* base, size_t bytes) : base_(base), bytes_(bytes) {}
    Mapping(Mapping&& o) noexcept;
    Mapping& operator=(Mapping&& o) noexcept;
    ~Mapping();
    void* base() const { return base_; }

   private:
    void* base_ = nullptr;
    size_t bytes_ = 0;
  };

  void allocate_pinned(size_t bytes, const HostPlacement& placement, const std::string& what);
  void allocate_mapped(size_t bytes, const HostPlacement& placement, const std::string& what);
  bool map_hugetlb(size_t bytes, const HostPlacement& placement);

  HostMemoryKind kind_;
  MappedHostBuffer pinned_;        // pinned
  Mapping mapping_;                // registered, huge_pages, pageable: our own mmap
  HostRegistration registration_;  // registered, huge_pages (declared after mapping_: released first)
  void* host_ = nullptr;
  void* device_ = nullptr;
  std::string pages_ = "4KiB";
  std::optional<int> numa_node_;
};

// Where `want` puts the host buffer of `device` (its PCI device's node from sysfs), or why it
// cannot (NumaChoice::skip: e.g. remote on a host of one node).
struct DevicePlacement {
  std::optional<HostPlacement> placement;
  std::string skip;
};
DevicePlacement host_placement_for(int device, NumaPlacement want);

// The page size a mapping at `addr` of `bytes` has, from /proc/self/smaps: "hugetlb_2MiB",
// "thp" or "4KiB" (also where smaps cannot be read).
std::string page_kind_of(const void* addr, size_t bytes);

}  // namespace p2pbench
