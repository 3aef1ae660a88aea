#include "kernels/staging_kernels.hpp"

#include "common/cuda_check.hpp"
#include "kernels/live_clock.cuh"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {

namespace {

// One thread. The abort word is shared by the send and receive chains of a bidirectional
// rank (two streams, possibly running at once), hence the volatile accesses.
__global__ void staging_step_kernel(StagingStep s) {
  volatile uint32_t* abort = s.abort;
  if (*abort != 0) return;
  if (s.signal_flag) {
    const uint32_t count = *s.signal_count + 1;
    *s.signal_count = count;
    // Release: the chunk's copy finished before this kernel started (stream order); the peer's
    // acquire of this flag orders its own copy of the slot after it.
    ptx::st_release_sys_u64(s.signal_flag, staging_flag(s.epoch, count));
  }
  if (!s.wait_flag) return;
  const uint64_t expected = staging_expected(s.epoch, *s.wait_count, s.role);
  uint64_t seen = ptx::ld_acquire_sys_u64(s.wait_flag);
  if (seen == expected) return;
  LiveClock clock(s.heartbeat);
  while (true) {
    seen = ptx::ld_acquire_sys_u64(s.wait_flag);
    if (seen == expected) return;
    const uint64_t waited = clock.waited_ns();
    if (waited > s.timeout_ns) {
      *abort = 1;
      s.fault->role = s.role;
      s.fault->ring = s.ring;
      s.fault->from_rank = s.from_rank;
      s.fault->to_rank = s.to_rank;
      s.fault->slot = s.wait_slot;
      s.fault->expected = expected;
      s.fault->seen = seen;
      s.fault->waited_ns = waited;
      s.fault->epoch = s.epoch;
      return;
    }
  }
}

}  // namespace

void enqueue_staging_step(const StagingStep& step, cudaStream_t stream) {
  staging_step_kernel<<<1, 1, 0, stream>>>(step);
  cuda_check_launch("the staged pipeline's flag kernel");
}

}  // namespace p2pbench::kernels
