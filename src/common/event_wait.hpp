// A host wait for a CUDA event with a deadline: every wait for GPU work in p2pbench ends, either
// with the work done or with a RuntimeFailure naming what it waited for.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace p2pbench {

// Polls `event` until it completes; throws RuntimeFailure after `deadline_s` seconds.
void wait_for_event(cudaEvent_t event, double deadline_s, const std::string& what);

}  // namespace p2pbench
