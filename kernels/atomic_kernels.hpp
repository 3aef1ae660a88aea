// Remote atomics: reductions (red.global.add.*, no value returned) into a target buffer that
// may be a peer mapping. Plain C++ host API: no device code, no MPI.
//
// Every op adds exactly 1 to every lane it covers (u32 1, f32 1.0f, each half 1.0), so after
// `iterations` launches from a zeroed target each element holds (ops on it per launch) x
// iterations, exact in the type as long as that count stays within the type's exact-integer
// range: u32 2^32 - 1, f32 2^24, f16 2048, bf16 256. Shapes whose one launch already exceeds
// it are refused; atomic_max_iterations says how many launches fit before a reset.
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

// How many launches after a reset stay exact (the verification limit).
uint64_t atomic_max_iterations(const AtomicShape& shape);

// Zeroes the target (all types: 0 bits == 0).
void atomic_reset(void* target, const AtomicShape& shape, cudaStream_t stream);

// Loads the kernel on the current device (lazy loading: call before a start gate spins).
void atomic_prepare(const AtomicShape& shape);

// Enqueues one launch. target: 16-byte aligned, atomic_target_bytes(shape) bytes; local
// memory or a peer mapping. Throws InputError for an unsupported shape.
void enqueue_atomics(const AtomicShape& shape, void* target, cudaStream_t stream);

// Checks, on the device that `target` is accessible from (the current one), that every element
// equals its exact expected total after `iterations` launches since the last reset. Enqueued
// on `stream` and waited for. nullopt when all match; otherwise the number of bad elements,
// the first bad index and its value.
std::optional<std::string> atomic_verify(const AtomicShape& shape, const void* target, uint64_t iterations,
                                         cudaStream_t stream);

}  // namespace p2pbench::kernels
