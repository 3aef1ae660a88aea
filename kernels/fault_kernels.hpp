// GPU faults for the fault-injection tests (see src/common/fault_injection.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace p2pbench::kernels {

// A kernel that stores through an invalid address: the context's next synchronisation fails
// with a sticky error (cudaErrorIllegalAddress), as after a real memory fault.
void enqueue_illegal_address(cudaStream_t stream);

// A kernel that spins for `seconds` of %globaltimer time, longer than any deadline of the
// run: to the host it looks like a hung GPU. (Bounded, so a test can never wedge the GPU.)
void enqueue_hang(double seconds, cudaStream_t stream);

// The same spin for `ns` nanoseconds ahead of a transfer: the burn-in's slow-window test knob
// (burn_in.inject_slow) delays one flow's transfers with it.
void enqueue_delay(uint64_t ns, cudaStream_t stream);

}  // namespace p2pbench::kernels
