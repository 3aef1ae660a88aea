#include "measure/rank_group.hpp"

namespace p2pbench {

RankGroup::RankGroup(const Communicator& comm, const RunnerOptions& options, const GroupLayout& layout, int device,
                     SharedGate& gate, PeerBuffers& buffers)
    : comm_(comm),
      steps_(comm, options.watchdog, options.faults),
      options_(options),
      me_{comm.rank()},
      layout_(layout),
      device_(device),
      gate_(gate),
      buffers_(buffers) {}

std::optional<std::string> RankGroup::no_path_reason(const Flow& flow) const {
  const int me = comm_.rank();
  if (flow.src_rank != me && flow.dst_rank != me) return std::nullopt;  // not this rank's to say
  return buffers_.no_path_reason(flow.src_rank == me ? flow.dst_rank : flow.src_rank);
}

Endpoints RankGroup::endpoints(int member, const Flow& flow, int dst_slot, const std::optional<HostBufferRequest>& host) {
  const int other = flow.src_rank == member ? flow.dst_rank : flow.src_rank;
  Endpoints e;
  e.flow = flow;
  e.rank = member;
  e.local_src = buffers_.local_src();
  e.local_dst = buffers_.local_dst(dst_slot);
  e.peer_src = other == member ? e.local_src : buffers_.peer_src(other);
  e.peer_dst = other == member ? e.local_dst : buffers_.peer_dst(other, dst_slot);
  e.local_signal_area = buffers_.local_signal_area();
  e.peer_signal_area = other == member ? e.local_signal_area : buffers_.peer_signal_area(other);
  if (host) {
    if (!host_buffer_ || !(*host_request_ == *host)) {
      host_buffer_.reset();  // freed before the next is made: both need not fit
      const DevicePlacement where = host_placement_for(device_, host->numa);
      if (!where.placement) throw std::runtime_error("placing the host-link buffer: " + where.skip);
      host_buffer_ = std::make_unique<HostMemory>(host->kind, host->bytes, *where.placement,
                                                  std::string("the host-link buffer (") + to_string(host->kind) + ")");
      host_request_ = host;
    }
    e.host = host_buffer_->device();
    e.host_memory = host_buffer_.get();
  }
  return e;
}

TransferTimer& RankGroup::timer(int, size_t lane) {
  while (timers_.size() <= lane)
    timers_.push_back(std::make_unique<TransferTimer>(options_.timeout_scale, options_.sanitizer_mode));
  return *timers_[lane];
}

std::vector<StepReport> RankGroup::step(const char* what, const std::function<void(int, StepReport&)>& local,
                                        double local_work_s) {
  return steps_.run_reports(what, [&](StepReport& r) { local(comm_.rank(), r); }, local_work_s);
}

}  // namespace p2pbench
