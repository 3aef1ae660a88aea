// Remote atomics: reductions (red.global.add.*, no value returned) into a target buffer that
// may be a peer mapping. Plain C++ host API: no device code, no MPI.
//
// Balanced ops keep every partial sum a small integer, exact in every type whatever the order
// of the reductions: a thread's ops add +1, -1, +1, -1, ... to every lane they cover (u32 1 or
// 2^32 - 1, f32 +-1.0f, each half +-1.0); with an even op count its last op adds +1 instead, so
// each thread nets `net` = 1 (odd ops) or 2 (even ops) per launch and is never more than `net`
// above its start. A negated launch (`negate`) adds the opposite, netting -net. Launches
// alternate +, -, +, ...: after an odd number of them from a zeroed target an element holds
// (threads on it) x net, after an even number 0, and no partial sum ever leaves
// [0, threads on it x net]. A shape is exact when that bound stays within the type's exact
// integer range (u32 2^32 - 1, f32 2^24, f16 2048, bf16 256); others are refused with the
// reason. Contention no longer limits the launch count: the runner uses an odd one.
//
// Scope: .relaxed, .gpu (the PTX default). All ops of a run come from one GPU, so gpu scope
// is what makes them atomic with respect to each other, peer memory included; the owner reads
// the result only after the launches completed (stream order, then the runner's sync).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace p2pbench::kernels {

enum class AtomicType {
  kU32,     // red.global.add.u32                   4 bytes  sm_80+
  kF32,     // red.global.add.f32                   4 bytes  sm_80+
  kF32x4,   // red.global.add.v4.f32               16 bytes  sm_90+
  kF16x2,   // red.global.add.noftz.f16x2           4 bytes  sm_80+
  kBf16x2,  // red.global.add.noftz.bf16x2          4 bytes  sm_90+
  kF16x8,   // red.global.add.noftz.v4.f16x2       16 bytes  sm_90+
  kBf16x8,  // red.global.add.noftz.v4.bf16x2      16 bytes  sm_90+
};

enum class AtomicPattern {
  kDistinct,  // thread t (global index) owns element t: no two threads share an address
  kHotSpot,   // thread t hits element t % hot_addresses (a warp covers up to 32 of them)
};

// One launch: blocks x threads threads, each issuing ops_per_thread reductions, all on its
// one element (an element is one op wide: 4 or 16 bytes).
struct AtomicShape {
  AtomicType type = AtomicType::kU32;
  AtomicPattern pattern = AtomicPattern::kDistinct;
  int blocks = 0;
  int threads = 0;             // per block, 1..1024
  uint32_t ops_per_thread = 0;
  uint32_t hot_addresses = 0;  // kHotSpot only, >= 1
};

const char* atomic_type_name(AtomicType type);        // "u32", "f32", "f32x4", "f16x2", ...
const char* atomic_pattern_name(AtomicPattern pattern);  // "distinct", "hot_spot"

// Why this shape cannot run on `device` (or cannot be verified exactly), or nullopt.
std::optional<std::string> atomic_unsupported_reason(const AtomicShape& shape, int device);

// Elements of the target and their size: distinct blocks x threads, hot spot hot_addresses.
uint64_t atomic_elements(const AtomicShape& shape);
size_t atomic_target_bytes(const AtomicShape& shape);

// Ops per launch (a vector op counts once) and the bytes each op adds into (4 or 16).
uint64_t atomic_operations(const AtomicShape& shape);
size_t atomic_bytes_per_op(const AtomicShape& shape);

// What each thread nets per launch: 1 for an odd ops_per_thread, 2 for an even one.
uint32_t atomic_net_per_thread(const AtomicShape& shape);

// Zeroes the target (all types: 0 bits == 0).
void atomic_reset(void* target, const AtomicShape& shape, cudaStream_t stream);

// Loads the kernel on the current device (lazy loading: call before a start gate spins).
void atomic_prepare(const AtomicShape& shape);

// Enqueues one launch (`negate`: the launch nets -net per thread; launches must alternate,
// starting with a plain one after a reset). target: 16-byte aligned, atomic_target_bytes(shape)
// bytes; local memory or a peer mapping. Throws InputError for an unsupported shape.
void enqueue_atomics(const AtomicShape& shape, void* target, bool negate, cudaStream_t stream);

// Checks, on the device that `target` is accessible from (the current one), that every element
// equals its exact expected total after `launches` alternating launches since the last reset
// (odd: threads on it x net; even: 0). Enqueued on `stream` and waited for. nullopt when all
// match; otherwise the number of bad elements, the first bad index and its value.
std::optional<std::string> atomic_verify(const AtomicShape& shape, const void* target, uint64_t launches,
                                         cudaStream_t stream);

}  // namespace p2pbench::kernels
