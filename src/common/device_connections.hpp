// The hardware work queues ("connections") CUDA gives a process's context: 8 unless
// CUDA_DEVICE_MAX_CONNECTIONS says otherwise, at most 32. With more streams than queues, several
// streams share a queue, and a kernel that spins until a peer moves (the start gate, the staged
// pipeline's flag kernels) then holds back whatever another stream queued behind it: a false
// dependency that can stall two ranks until their deadlines fire (seen: three ranks' staged ring,
// 14 streams on one GPU). Every p2pbench program asks for 32 before its first CUDA call; a value
// the user set is kept.
#pragma once

#include <cstdlib>
#include <string>

namespace p2pbench {

inline constexpr const char* kDeviceConnectionsVariable = "CUDA_DEVICE_MAX_CONNECTIONS";
inline constexpr int kDeviceConnectionsWanted = 32;

// Call before the process's first CUDA call: the driver reads the variable when it makes a context.
inline void request_device_connections() { setenv(kDeviceConnectionsVariable, "32", 0); }

// A warning for a value the user set below what p2pbench asks for (training images often set
// 1), or "" when it is unset or high enough. Call before request_device_connections().
inline std::string device_connections_warning() {
  const char* set = std::getenv(kDeviceConnectionsVariable);
  if (set == nullptr || *set == '\0') return "";
  const long value = std::strtol(set, nullptr, 10);
  if (value >= kDeviceConnectionsWanted) return "";
  return std::string(kDeviceConnectionsVariable) + "=" + set +
         " is set: each GPU context gets that many hardware queues, and p2pbench asks for 32. With fewer, a kernel "
         "that spins until a peer moves can hold back work queued behind it (ranks sharing a GPU, the staged ring) "
         "until a deadline fails the case; unset it for p2pbench, or set 32";
}

}  // namespace p2pbench
