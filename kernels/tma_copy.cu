// TMA copy: one thread per block drives Hopper bulk async copies global -> shared -> global
// through a ring of shared-memory stages; the SM's load/store units stay idle.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/device_caps.hpp"
#include "kernels/copy_device.cuh"
#include "kernels/copy_kernels.hpp"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {
namespace {

// Warp 0 lane 0 issues the bulk copies; warps 1..3 copy the < 16-byte head and tail. All
// four warps share the narrow LD/ST fallback when no bulk copy is possible.
constexpr int kTmaThreads = 128;
constexpr size_t kBulkAlign = 16;  // cp.async.bulk: 16-byte addresses and sizes
constexpr uint32_t kMbarrierBytes = sizeof(uint64_t);

// One block's share of the 16-byte-aligned body [head, body_end): chunks b, b + blocks,
// b + 2*blocks, ... (round-robin), each `chunk` bytes but the grid's last, which may be shorter.
struct BlockChunks {
  size_t head;
  size_t body_end;
  uint32_t chunk;
  size_t count;  // chunks of this block

  __device__ BlockChunks(size_t head_bytes, size_t body_end_bytes, uint32_t chunk_bytes)
      : head(head_bytes), body_end(body_end_bytes), chunk(chunk_bytes) {
    const size_t num_chunks = (body_end - head + chunk - 1) / chunk;
    count = blockIdx.x < num_chunks ? (num_chunks - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  }
  __device__ size_t offset_of(size_t j) const { return head + (blockIdx.x + j * gridDim.x) * chunk; }
  __device__ uint32_t length_of(size_t offset) const {
    const size_t left = body_end - offset;
    return static_cast<uint32_t>(left < chunk ? left : chunk);
  }
};

// The ring of shared-memory stages: `stages` buffers of `chunk` bytes, then one mbarrier each.
struct StageRing {
  uint32_t stage0;
  uint32_t bar0;
  uint32_t chunk;
  uint32_t stages;

  __device__ uint32_t buffer(uint32_t stage) const { return stage0 + stage * chunk; }
  __device__ uint32_t barrier(uint32_t stage) const { return bar0 + stage * kMbarrierBytes; }
};

// Fill `stage` with chunk j; its mbarrier completes the current phase when all bytes landed.
__device__ __forceinline__ void load_chunk(const uint8_t* src, const BlockChunks& chunks, const StageRing& ring,
                                           size_t j, uint32_t stage) {
  const size_t offset = chunks.offset_of(j);
  const uint32_t len = chunks.length_of(offset);
  ptx::mbarrier_arrive_expect_tx(ring.barrier(stage), len);
  ptx::bulk_load_global_to_shared(ring.buffer(stage), src + offset, len, ring.barrier(stage));
}

// The issuing thread's pipeline, chunk j in `stage`: wait for its load, store it, then refill a
// stage whose store has finished reading shared memory. With 2+ stages that is the PREVIOUS
// chunk's stage (wait_group.read 1 lets the store just issued keep reading), refilled with chunk
// j - 1 + stages, so stages - 1 loads stay in flight behind the stores. With one stage the only
// stage is refilled once its own store has read it: no overlap, by construction.
__device__ __forceinline__ void run_bulk_pipeline(const uint8_t* src, uint8_t* dst, const BlockChunks& chunks,
                                                  const StageRing& ring) {
  const size_t mine = chunks.count;
  for (size_t j = 0; j < mine && j < ring.stages; ++j) load_chunk(src, chunks, ring, j, static_cast<uint32_t>(j));
  uint32_t stage = 0;
  uint32_t parity = 0;  // flips each time the ring wraps: the k-th use of a stage waits for phase k
  for (size_t j = 0; j < mine; ++j) {
    while (!ptx::mbarrier_try_wait_parity(ring.barrier(stage), parity)) {
    }
    const size_t offset = chunks.offset_of(j);
    ptx::bulk_store_shared_to_global(dst + offset, ring.buffer(stage), chunks.length_of(offset));
    ptx::bulk_commit_group();
    if (ring.stages == 1) {
      if (j + 1 < mine) {
        ptx::bulk_wait_group_read<0>();
        load_chunk(src, chunks, ring, j + 1, 0);
      }
    } else if (j >= 1 && j - 1 + ring.stages < mine) {
      ptx::bulk_wait_group_read<1>();
      load_chunk(src, chunks, ring, j - 1 + ring.stages, stage == 0 ? ring.stages - 1 : stage - 1);
    }
    if (++stage == ring.stages) {
      stage = 0;
      parity ^= 1;
    }
  }
  // Every store must have written global memory before the kernel counts as done.
  ptx::bulk_wait_group<0>();
}

// Head and tail (< 16 bytes each) by byte, by warps 1..3, in parallel with warp 0's bulk copies.
// They are disjoint from the chunks, so no ordering with the bulk copies is needed.
__device__ __forceinline__ void copy_head_and_tail(const uint8_t* src, uint8_t* dst, size_t head, size_t body_end,
                                                   size_t bytes) {
  constexpr size_t kLeftoverThreads = kTmaThreads - 32;
  const size_t worker = static_cast<size_t>(blockIdx.x) * kLeftoverThreads + (threadIdx.x - 32);
  const size_t workers = static_cast<size_t>(gridDim.x) * kLeftoverThreads;
  for (size_t k = worker; k < head; k += workers) dst[k] = detail::load_stream(src + k);
  for (size_t k = body_end + worker; k < bytes; k += workers) dst[k] = detail::load_stream(src + k);
}

// Block b takes chunks b, b + blocks, b + 2*blocks, ... of the 16-byte-aligned body
// (round-robin): all blocks stay busy until the last wave, and at any moment the grid works
// on one contiguous window of the buffers. Shared memory: `stages` buffers of `chunk` bytes,
// then one mbarrier per stage; the rest of the dynamic allocation is padding.
__global__ void __launch_bounds__(kTmaThreads, 1)
    tma_copy_kernel(const uint8_t* src, uint8_t* dst, size_t bytes, uint32_t chunk, int stages,
                    unsigned* block_smids) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (block_smids != nullptr && threadIdx.x == 0) block_smids[blockIdx.x] = ptx::smid();

  const uintptr_t src_addr = reinterpret_cast<uintptr_t>(src);
  if (((src_addr ^ reinterpret_cast<uintptr_t>(dst)) & (kBulkAlign - 1)) != 0) {
    // src and dst can never both be 16-byte aligned, which every bulk copy needs: the whole
    // launch (every thread, uniform branch) takes the narrow LD/ST path. Such a case measures
    // LD/ST with 128-thread blocks, not TMA.
    detail::copy_any<4>(src, dst, bytes, static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                        static_cast<size_t>(gridDim.x) * blockDim.x);
    return;
  }

  size_t head = (kBulkAlign - (src_addr & (kBulkAlign - 1))) & (kBulkAlign - 1);
  if (head > bytes) head = bytes;
  const size_t body_end = head + ((bytes - head) & ~(kBulkAlign - 1));  // tail: [body_end, bytes)

  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t stage0 = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const StageRing ring{stage0, stage0 + chunk * static_cast<uint32_t>(stages), chunk, static_cast<uint32_t>(stages)};

  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < ring.stages; ++s) ptx::mbarrier_init(ring.barrier(s), 1);
    // Make the initialised barriers visible to the bulk-copy unit (async proxy) as well.
    ptx::fence_mbarrier_init();
    ptx::fence_proxy_async_shared_cta();
  }
  __syncthreads();

  if (threadIdx.x >= 32) return copy_head_and_tail(src, dst, head, body_end, bytes);
  if (threadIdx.x == 0) run_bulk_pipeline(src, dst, BlockChunks(head, body_end, chunk), ring);
#else
  // sm_80 and older have no bulk copies; tma_unsupported_reason refuses them on the host.
  __trap();
#endif
}

std::string describe(const TmaShape& s) {
  return "tma shape (blocks " + std::to_string(s.blocks) + ", smem " + std::to_string(s.smem_bytes) +
         " bytes, stages " + std::to_string(s.stages) + ")";
}

// Stages, mbarriers, and at least the one-block-per-SM padding. A chunk is smem_bytes / stages
// rounded down; the remainder of smem_bytes is not allocated.
size_t tma_dynamic_smem(const TmaShape& s, int device) {
  const size_t chunk = s.smem_bytes / static_cast<size_t>(s.stages);
  const size_t used = chunk * static_cast<size_t>(s.stages) + kMbarrierBytes * static_cast<size_t>(s.stages);
  const size_t pad = detail::one_block_per_sm_smem(device);
  return used > pad ? used : pad;
}

}  // namespace

std::optional<std::string> tma_unsupported_reason(const TmaShape& shape, int device) {
  if (shape.blocks < 1) return "blocks must be at least 1 (got " + std::to_string(shape.blocks) + ")";
  if (shape.stages < 1) return "stages must be at least 1 (got " + std::to_string(shape.stages) + ")";
  const size_t chunk = shape.smem_bytes / static_cast<size_t>(shape.stages);
  if (chunk < kBulkAlign || chunk % kBulkAlign != 0)
    return "the stage size smem / stages = " + std::to_string(chunk) +
           " bytes must be a positive multiple of 16 (bulk copies move 16-byte units)";
  if (auto why = requires_hopper(device, "TMA bulk copies")) return why;
  int optin = 0;
  cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
             "querying the opt-in shared memory per block");
  const size_t barriers = kMbarrierBytes * static_cast<size_t>(shape.stages);
  if (barriers >= static_cast<size_t>(optin) || shape.smem_bytes > static_cast<size_t>(optin) - barriers)
    return "smem " + std::to_string(shape.smem_bytes) + " bytes exceeds this GPU's " + std::to_string(optin) +
           " bytes of shared memory per block minus " + std::to_string(barriers) + " bytes of mbarriers";
  if (detail::one_block_per_sm_smem(device) > static_cast<size_t>(optin))
    return "this GPU cannot give one block more than half of an SM's shared memory, so one block per SM cannot "
           "be enforced";
  return std::nullopt;
}

void tma_prepare(const TmaShape& shape, int device) {
  if (auto why = tma_unsupported_reason(shape, device)) throw InputError(describe(shape) + ": " + *why);
  const size_t smem = tma_dynamic_smem(shape, device);
  cuda_check(cudaFuncSetAttribute(tma_copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
             "allowing " + std::to_string(smem) + " bytes of dynamic shared memory for the " + describe(shape));
}

void tma_copy(const TmaShape& shape, const void* src, void* dst, size_t bytes, cudaStream_t stream,
              unsigned* block_smids) {
  // Cheap guards against a kernel that would divide by zero or misalign its stages; the full
  // check is tma_unsupported_reason (tma_prepare).
  const size_t chunk = shape.stages < 1 ? 0 : shape.smem_bytes / static_cast<size_t>(shape.stages);
  if (chunk < kBulkAlign || chunk % kBulkAlign != 0)
    throw InputError(describe(shape) + ": the stage size must be a positive multiple of 16 bytes");
  const size_t smem = tma_dynamic_smem(shape, detail::current_device());
  tma_copy_kernel<<<shape.blocks, kTmaThreads, smem, stream>>>(static_cast<const uint8_t*>(src),
                                                               static_cast<uint8_t*>(dst), bytes,
                                                               static_cast<uint32_t>(chunk),
                                                               shape.stages, block_smids);
  cuda_check_launch("the TMA copy kernel, " + describe(shape));
}

}  // namespace p2pbench::kernels
