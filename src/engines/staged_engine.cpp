#include "engines/staged_engine.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"

namespace p2pbench {

namespace {

using kernels::kStagingReceiver;
using kernels::kStagingSender;

char* at(void* base, uint64_t offset) { return static_cast<char*>(base) + offset; }

// Host-side accesses to the shared flags and fault records (the peer processes and their GPUs
// touch them too).
void store_u64(void* p, uint64_t v) { __atomic_store_n(static_cast<uint64_t*>(p), v, __ATOMIC_RELEASE); }

std::string describe_flag(uint64_t v) {
  return "(" + std::to_string(v >> 32) + ", " + std::to_string(v & 0xffffffffu) + ")";
}

std::string describe(const Flow& f) { return std::to_string(f.src_rank) + " -> " + std::to_string(f.dst_rank); }

Event untimed_event(const char* what) { return make_untimed_event(std::string("the staged pipeline's ") + what); }

}  // namespace

int StagingArea::region_of(int rank) const {
  const auto it = std::find(ranks.begin(), ranks.end(), rank);
  return it == ranks.end() ? -1 : int(it - ranks.begin());
}

StagedEngine::StagedEngine(const StagingArea& area, uint32_t epoch, double timeout_s)
    : area_(area), epoch_(epoch), timeout_ns_(uint64_t(timeout_s * 1e9)) {
  area_.layout.validate();
  if (area_.layout.regions != area_.ranks.size())
    throw std::invalid_argument("the staging area has " + std::to_string(area_.layout.regions) + " regions for " +
                                std::to_string(area_.ranks.size()) + " ranks");
  if (epoch == 0) throw std::invalid_argument("the staged engine's epoch must be nonzero");
}

uint64_t* StagedEngine::flag(uint32_t ring, uint32_t slot, uint32_t writer_role) const {
  return reinterpret_cast<uint64_t*>(at(area_.device, area_.layout.flag_offset(ring, slot, writer_role)));
}

kernels::StagingFault* StagedEngine::fault_record(uint32_t region, bool device_address) const {
  return reinterpret_cast<kernels::StagingFault*>(
      at(device_address ? area_.device : area_.host, area_.layout.fault_offset(region)));
}

uint32_t* StagedEngine::count(uint32_t role, uint32_t slot) const {
  return counters_ + role * area_.layout.geometry.slots + slot;
}

void StagedEngine::add_flow(const Flow& f) {
  if (f.src_rank == f.dst_rank)
    throw RuntimeFailure("the staged baseline cannot move data from rank " + std::to_string(f.src_rank) + " to itself");
  const bool sends = f.src_rank == rank_;
  if (!sends && f.dst_rank != rank_)
    throw RuntimeFailure("rank " + std::to_string(rank_) + " was prepared for the flow " + describe(f) +
                         ", which it neither sends nor receives");
  const int other = sends ? f.dst_rank : f.src_rank;
  if (area_.region_of(other) < 0)
    throw RuntimeFailure("the staged baseline cannot run the flow " + describe(f) +
                         ": its ranks are on different nodes (the staging area is one node's host memory)");
  Side& side = sides_[sends ? kStagingSender : kStagingReceiver];
  if (side.ring >= 0)
    throw RuntimeFailure("the staged baseline cannot run the flows " + describe(side.flow) + " and " + describe(f) +
                         " at once: a rank " + (sends ? "sends" : "receives") + " at most one flow in a case");
  side.ring = area_.region_of(f.src_rank);  // the sender's region carries the flow
  side.flow = f;
  side.position = 0;
}

// This rank's flags and fault record start the case at (epoch, 0); its peers wait for that.
void StagedEngine::reset_own_flags() {
  std::memset(fault_record(uint32_t(region_), false), 0, sizeof(kernels::StagingFault));
  for (uint32_t role : {kStagingSender, kStagingReceiver}) {
    const Side& side = sides_[role];
    if (side.ring < 0) continue;
    for (uint32_t s = 0; s < area_.layout.geometry.slots; ++s)
      store_u64(at(area_.host, area_.layout.flag_offset(uint32_t(side.ring), s, role)), kernels::staging_flag(epoch_, 0));
  }
}

StagingStreams::StagingStreams(uint32_t lanes) {
  for (uint32_t role : {kStagingSender, kStagingReceiver}) {
    forks_[role] = untimed_event("fork event");
    for (uint32_t lane = 0; lane < lanes; ++lane) {
      lanes_[role].push_back(make_stream("a lane of the staged pipeline"));
      joins_[role].push_back(untimed_event("join event"));
    }
  }
}

void StagedEngine::prepare(int, int rank, const std::vector<Flow>& mine) {
  region_ = area_.region_of(rank);
  if (region_ < 0)
    throw RuntimeFailure("rank " + std::to_string(rank) + " is not on the node of its staging area");
  rank_ = rank;
  sides_[kStagingSender] = sides_[kStagingReceiver] = Side{};
  for (const Flow& f : mine) add_flow(f);
  if (!area_.counters && !own_counters_.get())
    own_counters_ = DeviceBuffer(area_.counter_bytes(), "the staged pipeline's counters");
  counters_ = area_.counters ? area_.counters : static_cast<uint32_t*>(own_counters_.get());
  // On a stream of its own, never the whole device: ranks that share a context (threads of one
  // process) have flag kernels spinning until this rank's flags move, and a device-wide wait
  // here would wait for them until their timeout.
  if (!area_.streams && !own_streams_) own_streams_ = std::make_unique<StagingStreams>(area_.layout.geometry.lanes);
  streams_ = area_.streams ? area_.streams : own_streams_.get();
  // On a lane of this rank's own, idle since its last case, never the whole device.
  const cudaStream_t clear = streams_->lane(kStagingSender, 0);
  cuda_check(cudaMemsetAsync(counters_, 0, area_.counter_bytes(), clear), "clearing the staged pipeline's counters");
  wait_for_stream(clear, kLocalWorkWaitS, "the clearing of the staged pipeline's counters");
  reset_own_flags();
}

uint32_t StagedEngine::role_of(const Transfer& t) const {
  if (rank_ < 0) throw RuntimeFailure("the staged engine was launched before prepare()");
  for (uint32_t role : {kStagingSender, kStagingReceiver})
    if (sides_[role].ring >= 0 && sides_[role].flow == t.flow) return role;
  throw RuntimeFailure("rank " + std::to_string(rank_) + " was not prepared for the staged flow " + describe(t.flow));
}

void StagedEngine::enqueue_side(uint32_t role, const Transfer& t, cudaStream_t stream) {
  Side& side = sides_[role];
  const auto ring = uint32_t(side.ring);
  const staging::Geometry& g = area_.layout.geometry;
  uint32_t* const abort = counters_ + 2 * g.slots;
  const std::vector<std::vector<staging::Op>> plan = staging::plan_transfer(t.bytes, g, &side.position);
  for (uint32_t lane = 0; lane < plan.size(); ++lane) {
    if (plan[lane].empty()) continue;
    const cudaStream_t lane_stream = streams_->lane(role, lane);
    cuda_check(cudaStreamWaitEvent(lane_stream, streams_->fork(role), 0), "forking a lane of the staged pipeline");
    for (const staging::Op& op : plan[lane]) {
      if (op.kind == staging::Op::kStep) {
        kernels::StagingStep s;
        if (op.signal_slot >= 0) {
          s.signal_flag = flag(ring, uint32_t(op.signal_slot), role);
          s.signal_count = count(role, uint32_t(op.signal_slot));
        }
        if (op.wait_slot >= 0) {
          s.wait_flag = flag(ring, uint32_t(op.wait_slot), 1 - role);
          s.wait_count = count(role, uint32_t(op.wait_slot));
          s.wait_slot = uint32_t(op.wait_slot);
        }
        s.ring = ring;
        s.from_rank = uint32_t(side.flow.src_rank);
        s.to_rank = uint32_t(side.flow.dst_rank);
        s.role = role;
        s.epoch = epoch_;
        s.timeout_ns = timeout_ns_;
        s.heartbeat = area_.heartbeat;
        s.abort = abort;
        s.fault = fault_record(uint32_t(region_), true);
        kernels::enqueue_staging_step(s, lane_stream);
        continue;
      }
      char* slot = at(area_.host, area_.layout.slot_offset(ring, op.slot));
      if (role == kStagingSender)
        cuda_check(cudaMemcpyAsync(slot, static_cast<const char*>(t.src) + op.offset, op.bytes, cudaMemcpyDeviceToHost,
                                   lane_stream),
                   "enqueuing a staged copy into host memory");
      else
        cuda_check(cudaMemcpyAsync(static_cast<char*>(t.dst) + op.offset, slot, op.bytes, cudaMemcpyHostToDevice,
                                   lane_stream),
                   "enqueuing a staged copy out of host memory");
    }
    cuda_check(cudaEventRecord(streams_->join(role, lane), lane_stream), "joining a lane of the staged pipeline");
    cuda_check(cudaStreamWaitEvent(stream, streams_->join(role, lane), 0), "joining a lane of the staged pipeline");
  }
}

void StagedEngine::launch(const Transfer& t, cudaStream_t stream) { launch_fused({t}, stream); }

void StagedEngine::launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) {
  std::vector<std::pair<uint32_t, const Transfer*>> sides;
  for (const Transfer& t : transfers) {
    const uint32_t role = role_of(t);
    for (const auto& [other, _] : sides)
      if (other == role) throw RuntimeFailure("a staged launch named the flow " + describe(t.flow) + " twice");
    sides.emplace_back(role, &t);
  }
  // Every side forks from the same point of the stream before any joins back into it, so a
  // rank's send and receive chains run at once.
  for (const auto& [role, t] : sides)
    cuda_check(cudaEventRecord(streams_->fork(role), stream), "forking the staged pipeline's lanes");
  for (const auto& [role, t] : sides) enqueue_side(role, *t, stream);
}

// The flag the waiter of `f` read, as the host reads it now: where it differs from what the GPU
// last saw, the peer's signal landed after the wait gave up (or the GPU never saw it land).
uint64_t StagedEngine::peer_flag_now(const kernels::StagingFault& f) const {
  const char* word = at(area_.host, area_.layout.flag_offset(f.ring, f.slot, 1 - f.role));
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(word), __ATOMIC_ACQUIRE);
}

std::optional<std::string> StagedEngine::fault() const {
  std::string what;
  for (uint32_t region = 0; region < area_.layout.regions; ++region) {
    const auto* f = fault_record(region, false);
    if (__atomic_load_n(&f->epoch, __ATOMIC_ACQUIRE) != epoch_) continue;
    const bool sender = f->role == kStagingSender;
    char waited[32];
    std::snprintf(waited, sizeof waited, "%.1f s", double(f->waited_ns) * 1e-9);
    if (!what.empty()) what += "; ";
    what += "rank " + std::to_string(area_.ranks[region]) + " gave up after " + waited + " waiting for rank " +
            std::to_string(sender ? f->to_rank : f->from_rank) + " to " + (sender ? "drain" : "fill") + " slot " +
            std::to_string(f->slot) + " of the " + std::to_string(f->from_rank) + "->" + std::to_string(f->to_rank) +
            " staging ring (flag " + describe_flag(f->expected) + " expected, " + describe_flag(f->seen) + " seen, " +
            describe_flag(peer_flag_now(*f)) + " in host memory now" +
            ((f->seen >> 32) != epoch_ ? ": the peer never started this case's transfers" : "") + ")";
  }
  if (what.empty()) return std::nullopt;
  return "staged pipeline stalled: " + what;
}

std::optional<std::string> StagedEngine::verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                                cudaStream_t stream) {
  if (auto f = fault()) return f;
  return TransferEngine::verify(dst, bytes, seed, offset, stream);
}

}  // namespace p2pbench
