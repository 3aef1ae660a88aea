#include "engines/transfer_engine.hpp"

#include "common/cuda_raii.hpp"
#include "common/event_wait.hpp"
#include "kernels/pattern_kernels.hpp"

namespace p2pbench {

std::optional<std::string> run_device_check(const std::function<void(kernels::PatternCheck*)>& enqueue, uint64_t bytes,
                                            cudaStream_t stream) {
  MappedHostBuffer result(sizeof(kernels::PatternCheck), "a verification result");
  auto* check = static_cast<kernels::PatternCheck*>(result.host());
  *check = {0, ~0ull};
  enqueue(static_cast<kernels::PatternCheck*>(result.device()));
  wait_for_stream(stream, kLocalWorkWaitS, "the verification");
  if (check->mismatches == 0) return std::nullopt;
  return std::to_string(check->mismatches) + " of " + std::to_string(bytes) + " bytes differ; first bad offset " +
         std::to_string(check->first_bad_offset);
}

std::optional<std::string> TransferEngine::verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                                  cudaStream_t stream) {
  return run_device_check([&](kernels::PatternCheck* r) { kernels::check_pattern(dst, bytes, seed, offset, r, stream); },
                          bytes, stream);
}

void TransferEngine::fill_source(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) {
  kernels::fill_pattern(region, bytes, seed, 0, stream);
}

void TransferEngine::poison_destination(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) {
  kernels::fill_poison(region, bytes, seed, 0, stream);
}

Transfer local_transfer(const Endpoints& e, uint64_t offset, size_t bytes) {
  return {static_cast<const char*>(e.local_src) + offset, static_cast<char*>(e.local_dst) + offset, bytes, e.flow};
}

Transfer TwoSidedEngine::transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const {
  return local_transfer(e, offset, bytes);
}

Transfer TransferEngine::transfer(Direction direction, const Endpoints& e, uint64_t offset, size_t bytes) const {
  const bool push = direction == Direction::kPush;
  const char* src = static_cast<const char*>(push ? e.local_src : e.peer_src);
  char* dst = static_cast<char*>(push ? e.peer_dst : e.local_dst);
  return {src + offset, dst + offset, bytes, e.flow};
}

}  // namespace p2pbench
