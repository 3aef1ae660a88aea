#include "kernels/stream_value_ops.hpp"

#include <cuda.h>  // types only

#include <string>

#include "common/driver_entry_point.hpp"

namespace p2pbench::kernels {
namespace {

using StreamValueOp = int (*)(void* stream, unsigned long long address, unsigned value, unsigned flags);
using StreamBatchMemOp = int (*)(void* stream, unsigned count, CUstreamBatchMemOpParams* ops, unsigned flags);

struct StreamValueOps {
  StreamValueOp wait = nullptr, write = nullptr;
  StreamBatchMemOp batch = nullptr;
};

// The driver's functions do not change within a process.
const StreamValueOps& ops() {
  static const StreamValueOps fetched{
      reinterpret_cast<StreamValueOp>(driver_entry_point<void*>("cuStreamWaitValue32", 12000)),
      reinterpret_cast<StreamValueOp>(driver_entry_point<void*>("cuStreamWriteValue32", 12000)),
      reinterpret_cast<StreamBatchMemOp>(driver_entry_point<void*>("cuStreamBatchMemOp", 12000))};
  return fetched;
}

unsigned long long address_of(const void* p) { return static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)); }

void check(int result, const char* what) {
  if (result != CUDA_SUCCESS) throw DriverFailure(std::string(what) + ": CUresult " + std::to_string(result));
}

}  // namespace

void require_stream_value_ops() { ops(); }

void stream_wait_value(cudaStream_t stream, const uint32_t* word, uint32_t value, unsigned flags, const char* what) {
  check(ops().wait(stream, address_of(word), value, flags), what);
}

void stream_write_value(cudaStream_t stream, uint32_t* word, uint32_t value, unsigned flags, const char* what) {
  check(ops().write(stream, address_of(word), value, flags), what);
}

void stream_write_values(cudaStream_t stream, const WordWrite* writes, unsigned count, const char* what) {
  constexpr unsigned kMost = 8;
  if (count == 0 || count > kMost) throw DriverFailure(std::string(what) + ": " + std::to_string(count) + " writes in one batch");
  CUstreamBatchMemOpParams params[kMost] = {};
  for (unsigned i = 0; i < count; ++i) {
    params[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    params[i].writeValue.address = address_of(writes[i].word);
    params[i].writeValue.value = writes[i].value;
    params[i].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
  }
  check(ops().batch(stream, count, params, 0), what);
}

}  // namespace p2pbench::kernels
