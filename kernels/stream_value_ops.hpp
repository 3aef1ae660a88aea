// The driver's 32-bit stream memory operations (cuStreamWaitValue32, cuStreamWriteValue32, and
// several writes in one cuStreamBatchMemOp):
// a copy-engine path's waits and flags with no SM involved. Fetched once per process at run time
// (common/driver_entry_point.hpp), so nothing links libcuda directly.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace p2pbench::kernels {

// Fetches both operations (once per process). Throws DriverFailure where the driver lacks them.
void require_stream_value_ops();

// Queues on `stream` a wait until the word at `word` satisfies `flags` (CU_STREAM_WAIT_VALUE_*)
// against `value`. Throws DriverFailure("<what>: CUresult N").
void stream_wait_value(cudaStream_t stream, const uint32_t* word, uint32_t value, unsigned flags, const char* what);

// Queues on `stream` a write of `value` to the word at `word` (CU_STREAM_WRITE_VALUE_* flags).
// Throws DriverFailure("<what>: CUresult N").
void stream_write_value(cudaStream_t stream, uint32_t* word, uint32_t value, unsigned flags, const char* what);

// Queues on `stream` the writes of `count` values (at most 8) to their words in one
// cuStreamBatchMemOp, in that order, each with the default flags (a memory barrier before it):
// one stream operation's cost instead of one per write. Throws DriverFailure("<what>: CUresult N").
struct WordWrite {
  uint32_t* word;
  uint32_t value;
};
void stream_write_values(cudaStream_t stream, const WordWrite* writes, unsigned count, const char* what);

}  // namespace p2pbench::kernels
