// The hardware work queues ("connections") CUDA gives a process's context: 8 unless
// CUDA_DEVICE_MAX_CONNECTIONS says otherwise, at most 32. With more streams than queues, several
// streams share a queue, and a kernel that spins until a peer moves (the start gate, the staged
// pipeline's flag kernels) then holds back whatever another stream queued behind it: a false
// dependency that can stall two ranks until their deadlines fire (seen: three ranks' staged ring,
// 14 streams on one GPU). Every p2pbench program asks for 32 before its first CUDA call; a value
// the user set is kept.
#pragma once

#include <cstdlib>

namespace p2pbench {

inline constexpr const char* kDeviceConnectionsVariable = "CUDA_DEVICE_MAX_CONNECTIONS";

// Call before the process's first CUDA call: the driver reads the variable when it makes a context.
inline void request_device_connections() { setenv(kDeviceConnectionsVariable, "32", 0); }

}  // namespace p2pbench
