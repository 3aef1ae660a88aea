// Every inline-PTX wrapper of the project lives here, so that each instruction's
// semantics (scope, ordering, cache hints) is written down once.
#pragma once

#include <cstdint>

namespace p2pbench::ptx {

// ---------------------------------------------------------------------------------------
// Timers and identity
// ---------------------------------------------------------------------------------------

// Nanoseconds of the GPU's global timer. Unlike clock64() it does not depend on the SM
// clock, so it can bound a wait in wall time. Not aligned between GPUs: calibrate against
// the host clock before comparing stamps from two GPUs.
__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The multiprocessor this thread runs on: lets the host count the SMs a launch really used.
__device__ __forceinline__ uint32_t smid() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// ---------------------------------------------------------------------------------------
// System-scope flags (host-mapped memory or peer memory)
// ---------------------------------------------------------------------------------------

// Acquire load at system scope: later reads see what the writer released before the flag.
__device__ __forceinline__ uint32_t ld_acquire_sys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Release store at system scope: earlier writes become visible before the flag does.
__device__ __forceinline__ void st_release_sys(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ uint64_t ld_acquire_sys_u64(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void st_release_sys_u64(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Relaxed (strong, unordered) system-scope store: a flag published without release, which the
// put_signal ordering test uses to see whether the data can arrive after its flag.
__device__ __forceinline__ void st_relaxed_sys(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Volatile system-scope store for host-visible reports (no ordering needed).
__device__ __forceinline__ void st_relaxed_sys_u64(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

}  // namespace p2pbench::ptx

namespace p2pbench::ptx {

// ---------------------------------------------------------------------------------------
// Copy kernels: streaming loads (sm_80+) and Hopper bulk asynchronous copies (sm_90+)
// ---------------------------------------------------------------------------------------
// The copy kernels are the only users of this section.

// Streaming loads: read-only path (.nc, valid because a copy never writes its source) and no
// L1 allocation, since every byte is read exactly once. Not volatile: the compiler may
// schedule them freely (the source does not change during the kernel), but never drop them
// because their results are stored.
__device__ __forceinline__ uint4 ld_nc_na_v4(const void* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

__device__ __forceinline__ uint64_t ld_nc_na_u64(const void* p) {
  uint64_t v;
  asm("ld.global.nc.L1::no_allocate.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ uint32_t ld_nc_na_u32(const void* p) {
  uint32_t v;
  asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ uint16_t ld_nc_na_u16(const void* p) {
  uint16_t v;
  asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}

// PTX has no 8-bit registers: the byte is zero-extended into a 16-bit one.
__device__ __forceinline__ uint8_t ld_nc_na_u8(const void* p) {
  uint16_t v;
  asm("ld.global.nc.L1::no_allocate.u8 %0, [%1];" : "=h"(v) : "l"(p));
  return static_cast<uint8_t>(v);
}

// Bulk copies and transaction-count mbarriers exist from sm_90 on. The project also builds
// sm_80 code, where these wrappers trap; the host side refuses TMA launches below 9.0, so a
// trap means a missing host check. Shared-memory operands are 32-bit shared::cta addresses
// (__cvta_generic_to_shared); mbarriers are 8-byte aligned 64-bit objects.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define P2PBENCH_PTX_BULK(...) asm volatile(__VA_ARGS__)
#else
#define P2PBENCH_PTX_BULK(...) __trap()
#endif

// Sets the barrier's expected arrival count for every phase; phase 0 starts incomplete.
__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t arrivals) {
  P2PBENCH_PTX_BULK("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes prior mbarrier.init visible (release, cluster scope) before the barriers are used,
// including by the bulk-copy unit's complete_tx.
__device__ __forceinline__ void fence_mbarrier_init() {
  P2PBENCH_PTX_BULK("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Orders this thread's generic-proxy shared-memory accesses before later async-proxy ones
// (bulk copies). Needed after generic writes to memory that a bulk copy then touches.
__device__ __forceinline__ void fence_proxy_async_shared_cta() {
  P2PBENCH_PTX_BULK("fence.proxy.async.shared::cta;" ::: "memory");
}

// One arrival (release, CTA scope) that also raises the current phase's pending transaction
// count by `bytes`: the phase completes when the arrival count and the bytes of the bulk
// copies that complete_tx on this barrier have both come in. tx-count is limited to 2^20-1.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  P2PBENCH_PTX_BULK("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// True once the phase with parity `parity` has completed (acquire, CTA scope: the bytes the
// bulk copies wrote are then visible). try_wait may suspend the thread for a
// hardware-chosen time before returning false, so a loop around it is not a hot spin.
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  P2PBENCH_PTX_BULK(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// Bulk copy global -> this CTA's shared memory (a shared::cta address is a valid
// shared::cluster address of the own CTA; no cluster launch needed). Completion is reported
// as `bytes` transaction bytes on `bar`. bytes: multiple of 16; both addresses 16-aligned.
__device__ __forceinline__ void bulk_load_global_to_shared(uint32_t smem_dst, const void* gmem_src,
                                                           uint32_t bytes, uint32_t bar) {
  P2PBENCH_PTX_BULK(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_dst),
      "l"(gmem_src), "r"(bytes), "r"(bar)
      : "memory");
}

// Bulk copy this CTA's shared memory -> global, tracked by the issuing thread's bulk
// async-groups (see bulk_commit_group / bulk_wait_group*). Same size/alignment rules.
__device__ __forceinline__ void bulk_store_shared_to_global(void* gmem_dst, uint32_t smem_src, uint32_t bytes) {
  P2PBENCH_PTX_BULK("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem_dst), "r"(smem_src),
                    "r"(bytes)
                    : "memory");
}

// Closes the bulk async-group of this thread's uncommitted bulk_group copies.
__device__ __forceinline__ void bulk_commit_group() { P2PBENCH_PTX_BULK("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until at most `Pending` of this thread's most recent bulk async-groups have not yet
// finished READING their sources: their shared-memory stages may be overwritten, although the
// writes to global memory may still be in flight.
template <int Pending>
__device__ __forceinline__ void bulk_wait_group_read() {
  P2PBENCH_PTX_BULK("cp.async.bulk.wait_group.read %0;" ::"n"(Pending) : "memory");
}

// Waits until at most `Pending` of this thread's bulk async-groups are incomplete, writes
// to global memory included.
template <int Pending>
__device__ __forceinline__ void bulk_wait_group() {
  P2PBENCH_PTX_BULK("cp.async.bulk.wait_group %0;" ::"n"(Pending) : "memory");
}

#undef P2PBENCH_PTX_BULK

}  // namespace p2pbench::ptx

namespace p2pbench::ptx {

// ---------------------------------------------------------------------------------------
// Latency and remote-atomic kernels: strong loads/stores, pointer-chase loads, reductions
// ---------------------------------------------------------------------------------------
// Users: kernels/latency_kernels.cu, kernels/atomic_kernels.cu and the collectives (methods/collectives).

// Relaxed system-scope loads and stores. Strong (morally strong with the peer's strong
// accesses), so a poll is guaranteed to see the peer's store eventually, and never served
// from L1 (SASS: LDG/STG .STRONG.SYS), so a polled line is re-read from L2 every time.
// Vector forms: each u64 element is one single-copy-atomic access, so a {data, sequence}
// word read with them is never half old, half new; the order among elements is unspecified.
__device__ __forceinline__ uint64_t ld_relaxed_sys_u64(const void* p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void ld_relaxed_sys_v2_u64(const void* p, uint64_t& a, uint64_t& b) {
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

__device__ __forceinline__ void st_relaxed_sys_v2_u64(void* p, uint64_t a, uint64_t b) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}

__device__ __forceinline__ uint4 ld_relaxed_sys_v4_u32(const void* p) {
  uint4 v;
  asm volatile("ld.relaxed.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

__device__ __forceinline__ uint32_t ld_relaxed_sys_u32(const void* p) {
  uint32_t v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Plain (weak) global stores: a payload that a release (fence) later publishes.
__device__ __forceinline__ void st_global_v4_u32(void* p, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

__device__ __forceinline__ void st_global_u32(void* p, uint32_t v) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Plain (weak, L1-cacheable) 8-byte global load. Volatile asm only so that the compiler keeps
// every load of the chase where it is.
__device__ __forceinline__ uint64_t ld_weak_u64(const void* p) {
  uint64_t v;
  asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// The same load through the GENERIC address space (SASS LD, not LDG): what nvbandwidth's
// `p = p->next` compiles to, since nvcc cannot prove a loaded pointer is global.
__device__ __forceinline__ uint64_t ld_generic_u64(const void* p) {
  uint64_t v;
  asm volatile("ld.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Reductions (fire-and-forget atomics: no value comes back, so a thread can keep many in
// flight). Default semantics: .relaxed, .gpu scope: atomic with respect to every other
// atomic of this GPU, which is all a one-writer benchmark needs, also on peer memory.
// Written as inline PTX, not atomicAdd, so that the compiler can neither turn them into
// atom (value returned) nor aggregate them across a warp.
__device__ __forceinline__ void red_add_u32(void* p, uint32_t v) {
  asm volatile("red.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void red_add_f32(void* p, float v) {
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

// Two packed halves per 32-bit operand, added lane-wise without flushing subnormals (sm_60+).
__device__ __forceinline__ void red_add_f16x2(void* p, uint32_t packed) {
  asm volatile("red.global.add.noftz.f16x2 [%0], %1;" ::"l"(p), "r"(packed) : "memory");
}

// Vector reductions and bf16x2 exist from sm_90 on. The project also builds sm_80 code,
// where these wrappers trap; atomic_unsupported_reason refuses them below 9.0, so a trap
// means a missing host check.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define P2PBENCH_PTX_SM90(...) asm volatile(__VA_ARGS__)
#else
#define P2PBENCH_PTX_SM90(...) __trap()
#endif

__device__ __forceinline__ void red_add_bf16x2(void* p, uint32_t packed) {
  P2PBENCH_PTX_SM90("red.global.add.noftz.bf16x2 [%0], %1;" ::"l"(p), "r"(packed) : "memory");
}

// One 16-byte reduction (one instruction, one request): 4 floats, 8 halves, 8 bfloat16s.
// p must be 16-byte aligned.
__device__ __forceinline__ void red_add_v4_f32(void* p, float a, float b, float c, float d) {
  P2PBENCH_PTX_SM90("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d)
                    : "memory");
}

// The same at system scope: atomic also with the reductions other GPUs make to the address
// (the collectives' reduce-scatter, where every rank adds into the owner's chunk).
__device__ __forceinline__ void red_add_sys_v4_f32(void* p, float a, float b, float c, float d) {
  P2PBENCH_PTX_SM90("red.relaxed.sys.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c),
                    "f"(d)
                    : "memory");
}

__device__ __forceinline__ void red_add_sys_f32(void* p, float v) {
  asm volatile("red.relaxed.sys.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

__device__ __forceinline__ void red_add_v4_f16x2(void* p, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  P2PBENCH_PTX_SM90("red.global.add.noftz.v4.f16x2 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c),
                    "r"(d)
                    : "memory");
}

__device__ __forceinline__ void red_add_v4_bf16x2(void* p, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  P2PBENCH_PTX_SM90("red.global.add.noftz.v4.bf16x2 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c),
                    "r"(d)
                    : "memory");
}

// The same at system scope (reduce_scatter_add_bf16, where every rank adds into the owner's
// chunk): 8 bf16, each add rounded to bf16 (to nearest even) in the order the adds arrive.
__device__ __forceinline__ void red_add_sys_v4_bf16x2(void* p, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  P2PBENCH_PTX_SM90("red.relaxed.sys.global.add.noftz.v4.bf16x2 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b),
                    "r"(c), "r"(d)
                    : "memory");
}

#undef P2PBENCH_PTX_SM90

}  // namespace p2pbench::ptx

namespace p2pbench::ptx {

// ---------------------------------------------------------------------------------------
// The HBM stream workload: 16-byte loads and stores with cache hints
// ---------------------------------------------------------------------------------------
// Users: kernels/hbm_stream.cu (HbmStreamShape::hints). Every byte is read once and written
// once, so the hints only decide what the stream leaves behind in L1 and L2 and how L2 fetches.
// 16 bytes per lane is the widest coalesced access before sm_100 (.v8.b32 / .v4.b64 need it).
// Requirements (PTX ISA, Target ISA notes): .L1::no_allocate sm_70; .L2::256B sm_75;
// createpolicy and .L2::cache_hint sm_80. None is Hopper-only; the direct
// .L2::evict_first qualifier of ld/st (.level2::eviction_priority) would be, and more: it needs
// sm_100, so on sm_90 an L2 evict-first stream goes through a createpolicy cache policy.
// The project builds sm_80 and sm_90 code; below sm_80 the policy wrappers trap (the build
// never targets it). Loads are not volatile (the source does not change during a stream);
// stores are volatile with a memory clobber, like the other store wrappers.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define P2PBENCH_PTX_SM80(...) asm volatile(__VA_ARGS__)
#define P2PBENCH_PTX_SM80_PURE(...) asm(__VA_ARGS__)
#else
#define P2PBENCH_PTX_SM80(...) __trap()
#define P2PBENCH_PTX_SM80_PURE(...) __trap()
#endif

// Cache streaming (.cs: evict first in L1 and L2) on the read-only path.
__device__ __forceinline__ uint4 ld_cs_nc_v4(const void* p) {
  uint4 v;
  asm("ld.global.cs.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// ld_nc_na_v4 that also asks L2 to fetch the whole 256-byte block around the address.
__device__ __forceinline__ uint4 ld_nc_na_l2_256b_v4(const void* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

// An L2 cache policy that gives every line it touches evict-first priority (fraction 1.0).
// The policy is an opaque 64-bit value for the .L2::cache_hint loads and stores below.
__device__ __forceinline__ uint64_t createpolicy_l2_evict_first() {
  uint64_t policy = 0;
  P2PBENCH_PTX_SM80_PURE("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// ld_nc_na_v4 under an L2 cache policy (createpolicy_*).
__device__ __forceinline__ uint4 ld_nc_na_policy_v4(const void* p, uint64_t policy) {
  uint4 v{};
  P2PBENCH_PTX_SM80_PURE("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                         : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                         : "l"(p), "l"(policy));
  return v;
}

// Plain (weak, write-back) 16-byte store.
__device__ __forceinline__ void st_v4(void* p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// Plain 16-byte store into shared memory, at a shared::cta address (a stage a bulk store reads).
__device__ __forceinline__ void st_shared_v4(uint32_t smem, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(smem), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// Cache-streaming store (.cs: the line is likely not touched again, evict it first).
__device__ __forceinline__ void st_cs_v4(void* p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// 16-byte store that allocates no L1 line, under an L2 cache policy (createpolicy_*).
__device__ __forceinline__ void st_na_policy_v4(void* p, uint4 v, uint64_t policy) {
  P2PBENCH_PTX_SM80("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x),
                    "r"(v.y), "r"(v.z), "r"(v.w), "l"(policy)
                    : "memory");
}

#undef P2PBENCH_PTX_SM80
#undef P2PBENCH_PTX_SM80_PURE

}  // namespace p2pbench::ptx
