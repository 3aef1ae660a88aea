#include "engines/ce_engine.hpp"

#include "common/cuda_check.hpp"

namespace p2pbench {

void CopyEngine::launch(const Transfer& t, cudaStream_t stream) {
  // cudaMemcpyDefault: unified addressing tells local from peer memory, so one call serves
  // push (local -> peer) and pull (peer -> local).
  cuda_check(cudaMemcpyAsync(t.dst, t.src, t.bytes, cudaMemcpyDefault, stream), "enqueuing a copy-engine transfer");
}

}  // namespace p2pbench
