#include "kernels/gate_kernels.hpp"

#include "common/cuda_check.hpp"
#include "kernels/live_clock.cuh"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {

namespace {

__global__ void gate_wait_kernel(const uint32_t* gate, uint32_t ticket, uint64_t timeout_ns, const uint64_t* heartbeat,
                                 GateStamps* stamps) {
  LiveClock clock(heartbeat);
  uint32_t timed_out = 0;
  while (ptx::ld_acquire_sys(gate) < ticket) {
    if (clock.waited_ns() > timeout_ns) {
      timed_out = 1;
      break;
    }
  }
  ptx::st_relaxed_sys_u64(&stamps->release_ns, ptx::globaltimer_ns());
  ptx::st_relaxed_sys_u64(&stamps->end_ns, 0);
  stamps->timed_out = timed_out;
}

__global__ void end_stamp_kernel(GateStamps* stamps) { ptx::st_relaxed_sys_u64(&stamps->end_ns, ptx::globaltimer_ns()); }

__global__ void clock_probe_kernel(const uint64_t* host_ns, uint64_t* gpu_ns, uint64_t timeout_ns) {
  const uint64_t t0 = ptx::globaltimer_ns();
  uint64_t now = t0;
  while (ptx::ld_acquire_sys_u64(host_ns) == 0 && now - t0 < timeout_ns) now = ptx::globaltimer_ns();
  ptx::st_relaxed_sys_u64(gpu_ns, ptx::globaltimer_ns());
}

__global__ void sm_clock_probe_kernel(uint64_t* cycles_and_ns, uint64_t duration_ns) {
  const uint64_t t0 = ptx::globaltimer_ns();
  const long long c0 = clock64();
  uint64_t t = t0;
  while (t - t0 < duration_ns) t = ptx::globaltimer_ns();
  const long long c1 = clock64();
  cycles_and_ns[0] = uint64_t(c1 - c0);
  cycles_and_ns[1] = t - t0;
}

}  // namespace

void enqueue_gate_wait(const uint32_t* gate, uint32_t ticket, uint64_t timeout_ns, const uint64_t* heartbeat,
                       GateStamps* stamps, cudaStream_t stream) {
  gate_wait_kernel<<<1, 1, 0, stream>>>(gate, ticket, timeout_ns, heartbeat, stamps);
  cuda_check_launch("the start-gate wait kernel");
}

void enqueue_end_stamp(GateStamps* stamps, cudaStream_t stream) {
  end_stamp_kernel<<<1, 1, 0, stream>>>(stamps);
  cuda_check_launch("the end-stamp kernel");
}

void enqueue_clock_probe(const uint64_t* host_ns, uint64_t* gpu_ns, uint64_t timeout_ns, cudaStream_t stream) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(host_ns, gpu_ns, timeout_ns);
  cuda_check_launch("the clock calibration kernel");
}

void enqueue_sm_clock_probe(uint64_t* cycles_and_ns, uint64_t duration_ns, cudaStream_t stream) {
  sm_clock_probe_kernel<<<1, 1, 0, stream>>>(cycles_and_ns, duration_ns);
  cuda_check_launch("the SM clock probe kernel");
}

}  // namespace p2pbench::kernels
