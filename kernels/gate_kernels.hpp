// Kernels of the measurement core: the start gate, time stamps and clock probes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace p2pbench::kernels {

// Written by the GPU into mapped host memory: when the gate opened and when the work ended,
// in that GPU's %globaltimer nanoseconds.
struct GateStamps {
  uint64_t release_ns;
  uint64_t end_ns;
  uint32_t timed_out;  // 1 when the gate never opened within the timeout
  uint32_t reserved;
};

// Holds `stream` until *gate >= ticket (a host store releases every waiting GPU at once) or
// until timeout_ns have passed while the host's `heartbeat` moved (kernels/live_clock.cuh; nullptr:
// plain %globaltimer time); stamps the release in stamps->release_ns.
void enqueue_gate_wait(const uint32_t* gate, uint32_t ticket, uint64_t timeout_ns, const uint64_t* heartbeat,
                       GateStamps* stamps, cudaStream_t stream);

// Stamps the end of the work queued before it.
void enqueue_end_stamp(GateStamps* stamps, cudaStream_t stream);

// Clock calibration: waits until *host_ns (mapped host memory) is non-zero, then writes the
// GPU's %globaltimer to *gpu_ns. The host stores its CLOCK_REALTIME just before releasing it.
void enqueue_clock_probe(const uint64_t* host_ns, uint64_t* gpu_ns, uint64_t timeout_ns, cudaStream_t stream);

// Busy-waits `duration_ns` and reports {clock64 cycles, globaltimer ns} elapsed, to derive the
// SM clock the GPU actually ran at.
void enqueue_sm_clock_probe(uint64_t* cycles_and_ns, uint64_t duration_ns, cudaStream_t stream);

}  // namespace p2pbench::kernels
