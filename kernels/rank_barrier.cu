#include "kernels/rank_barrier.hpp"

#include "common/cuda_check.hpp"

namespace p2pbench::kernels {

void reset_barriers(uint32_t* words, uint32_t* counts, BarrierHeader* header, cudaStream_t stream) {
  cuda_check(cudaMemsetAsync(words, 0, kBarrierWordsBytes, stream), "zeroing the barrier words");
  cuda_check(cudaMemsetAsync(counts, 0, kMaxBarrierBlocks * sizeof(uint32_t), stream), "zeroing the barrier counts");
  cuda_check(cudaMemsetAsync(header, 0, sizeof(BarrierHeader), stream), "zeroing the barrier header");
}

}  // namespace p2pbench::kernels
