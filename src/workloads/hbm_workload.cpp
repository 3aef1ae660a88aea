#include "workloads/hbm_workload.hpp"

#include "common/cuda_raii.hpp"
#include "common/event_wait.hpp"
#include "kernels/pattern_kernels.hpp"

namespace p2pbench {

namespace {
constexpr uint64_t kHbmSeed = 0x4b4dull;  // the source's pattern; copies keep offsets
}

HbmWorkload::HbmWorkload(uint64_t bytes, int device, const kernels::HbmStreamShape& shape)
    : bytes_(bytes),
      device_(device),
      shape_(shape),
      blocks_(kernels::hbm_stream_blocks(device, shape)),
      src_(bytes, "the HBM workload's source"),
      dst_(bytes, "the HBM workload's destination"),
      next_chunk_(sizeof(unsigned long long), "the HBM stream's chunk counter") {
  const Stream stream = make_stream("filling the HBM workload's source");
  kernels::fill_pattern(src_.get(), bytes_, kHbmSeed, 0, stream.get());
  wait_for_stream(stream.get(), kLocalWorkWaitS, "the filling of the HBM workload's source");
}

void HbmWorkload::set_sm_target(int sms, cudaStream_t /*stream*/) { blocks_ = kernels::hbm_stream_blocks(device_, shape_, sms); }

void HbmWorkload::enqueue(cudaStream_t stream) {
  kernels::hbm_stream(src_.get(), dst_.get(), bytes_, blocks_, static_cast<unsigned long long*>(next_chunk_.get()), stream,
                      shape_);
}

void HbmWorkload::poison_result(cudaStream_t stream) { kernels::fill_poison(dst_.get(), bytes_, kHbmSeed, 0, stream); }

std::optional<std::string> HbmWorkload::check(cudaStream_t stream) {
  MappedHostBuffer result(sizeof(kernels::PatternCheck), "the HBM workload's check");
  auto* check = static_cast<kernels::PatternCheck*>(result.host());
  *check = {0, ~0ull};
  kernels::check_pattern(dst_.get(), bytes_, kHbmSeed, 0, static_cast<kernels::PatternCheck*>(result.device()), stream);
  wait_for_stream(stream, kLocalWorkWaitS, "the HBM workload's check");
  if (check->mismatches == 0) return std::nullopt;
  return "HBM stream: " + std::to_string(check->mismatches) + " of " + std::to_string(bytes_) +
         " bytes differ from the source; first bad offset " + std::to_string(check->first_bad_offset);
}

std::string HbmWorkload::describe() const {
  return "hbm stream: " + std::to_string(bytes_) + " bytes HBM -> HBM per launch, " + std::to_string(blocks_) +
         " blocks of 1024 threads, " + kernels::describe(shape_) + "; GB/s counts bytes copied (HBM traffic is twice that)";
}

}  // namespace p2pbench
