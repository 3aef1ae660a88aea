// ce_then_flag, the copy engine's ping-pong (the protocol: kernels/latency_kernels.hpp). Used
// by latency_kernels.cu's host API only, which checks the arguments first.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>

#include "kernels/latency_kernels.hpp"

namespace p2pbench::kernels {

std::optional<std::string> ce_ping_pong_unsupported_reason(const PingPongArgs& args);
size_t ce_ping_pong_inbox_bytes(size_t payload_bytes);     // the flag line and a slot per round
size_t ce_ping_pong_messages_bytes(size_t payload_bytes);  // a message per round
int ce_ping_pong_check_threads();
// Fetches the stream memory operations and loads the stamp, watchdog and check kernels.
void ce_ping_pong_prepare();
void enqueue_ce_messages(const PingPongArgs& args, cudaStream_t stream);
void enqueue_ce_ping_pong(const PingPongArgs& args, cudaStream_t stream);

}  // namespace p2pbench::kernels
