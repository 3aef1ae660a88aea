#include "engines/sm_engines.hpp"

#include <set>
#include <vector>

#include "common/bounded_copier.hpp"
#include "common/cuda_raii.hpp"
#include "common/event_wait.hpp"

namespace p2pbench {

int count_sms_of_launch(int blocks, cudaStream_t stream, const std::function<void(unsigned*)>& launch_with_smids) {
  DeviceBuffer smids(sizeof(unsigned) * size_t(blocks), "per-block SM ids");
  launch_with_smids(static_cast<unsigned*>(smids.get()));
  // A copy into pageable memory would wait for the launch inside cudaMemcpyAsync, with no deadline.
  wait_for_stream(stream, kLocalWorkWaitS, "the SM-count launch");
  std::vector<unsigned> host(static_cast<size_t>(blocks));
  BoundedCopier().to_host(host.data(), smids.get(), smids.size(), "the per-block SM ids");
  return int(std::set<unsigned>(host.begin(), host.end()).size());
}

}  // namespace p2pbench
