#include "engines/host_link_engine.hpp"

#include "common/cuda_check.hpp"

namespace p2pbench {

Transfer HostLinkEngine::transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const {
  const char* src = static_cast<const char*>(source_region(e));
  char* dst = static_cast<char*>(destination_region(e));
  return {src + offset, dst + offset, bytes, e.flow};
}

void HostLinkEngine::launch(const Transfer& t, cudaStream_t stream) {
  cuda_check(cudaMemcpyAsync(t.dst, t.src, t.bytes, cudaMemcpyDefault, stream),
             kind_ == kHostToDevice ? "enqueuing a host-to-device copy" : "enqueuing a device-to-host copy");
}

}  // namespace p2pbench
