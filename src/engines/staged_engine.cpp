#include "engines/staged_engine.hpp"

#include <cstdio>
#include <cstring>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace p2pbench {

namespace {

using kernels::kStagingReceiver;
using kernels::kStagingSender;

char* at(void* base, uint64_t offset) { return static_cast<char*>(base) + offset; }

// Host-side accesses to the shared flags and fault records (the peer process and both GPUs
// touch them too).
void store_u64(void* p, uint64_t v) { __atomic_store_n(static_cast<uint64_t*>(p), v, __ATOMIC_RELEASE); }

std::string describe_flag(uint64_t v) {
  return "(" + std::to_string(v >> 32) + ", " + std::to_string(v & 0xffffffffu) + ")";
}

}  // namespace

StagedEngine::StagedEngine(const StagingArea& area, uint32_t epoch, double timeout_s)
    : area_(area), epoch_(epoch), timeout_ns_(uint64_t(timeout_s * 1e9)) {
  area_.layout.geometry.validate();
  if (epoch == 0) throw std::invalid_argument("the staged engine's epoch must be nonzero");
}

uint64_t* StagedEngine::flag(uint32_t direction, uint32_t slot, uint32_t writer_role) const {
  return reinterpret_cast<uint64_t*>(at(area_.device, area_.layout.flag_offset(direction, slot, writer_role)));
}

kernels::StagingFault* StagedEngine::fault_record(uint32_t rank, bool device_address) const {
  return reinterpret_cast<kernels::StagingFault*>(
      at(device_address ? area_.device : area_.host, area_.layout.fault_offset(rank)));
}

uint32_t* StagedEngine::count(uint32_t direction, uint32_t slot) const {
  return static_cast<uint32_t*>(state_.get()) + direction * area_.layout.geometry.slots + slot;
}

void StagedEngine::prepare(int, int rank, const std::vector<Flow>& mine) {
  if (rank < 0 || rank >= int(staging::kRanks))
    throw RuntimeFailure("the staged baseline runs between ranks 0 and 1, not on rank " + std::to_string(rank));
  rank_ = rank;
  send_direction_ = receive_direction_ = -1;
  for (const Flow& o : mine) {
    if (o.src_rank == o.dst_rank || o.src_rank < 0 || o.src_rank >= int(staging::kRanks) || o.dst_rank < 0 ||
        o.dst_rank >= int(staging::kRanks))
      throw RuntimeFailure("the staged baseline cannot move data " + std::to_string(o.src_rank) + " -> " +
                           std::to_string(o.dst_rank));
    if (o.src_rank == rank) send_direction_ = o.src_rank;
    if (o.dst_rank == rank) receive_direction_ = o.src_rank;
  }
  const uint32_t slots = area_.layout.geometry.slots;
  state_ = DeviceBuffer((staging::kDirections * slots + 1) * sizeof(uint32_t), "the staged pipeline's counters");
  cuda_check(cudaMemset(state_.get(), 0, state_.size()), "clearing the staged pipeline's counters");
  cuda_check(cudaDeviceSynchronize(), "clearing the staged pipeline's counters");

  // This rank's flags and fault record start the case at (epoch, 0); its peer waits for that.
  std::memset(fault_record(uint32_t(rank), false), 0, sizeof(kernels::StagingFault));
  for (uint32_t s = 0; s < slots; ++s) {
    if (send_direction_ >= 0) store_u64(at(area_.host, area_.layout.flag_offset(uint32_t(send_direction_), s, kStagingSender)),
                                        kernels::staging_flag(epoch_, 0));
    if (receive_direction_ >= 0)
      store_u64(at(area_.host, area_.layout.flag_offset(uint32_t(receive_direction_), s, kStagingReceiver)),
                kernels::staging_flag(epoch_, 0));
  }
  position_[0] = position_[1] = 0;

  auto untimed_event = [](const char* what) {
    cudaEvent_t e = nullptr;
    cuda_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), std::string("creating the staged pipeline's ") + what);
    return Event(e);
  };
  fork_ = untimed_event("fork event");
  for (uint32_t role : {kStagingSender, kStagingReceiver}) {
    lanes_[role].clear();
    joins_[role].clear();
    if ((role == kStagingSender ? send_direction_ : receive_direction_) < 0) continue;
    for (uint32_t lane = 0; lane < area_.layout.geometry.lanes; ++lane) {
      lanes_[role].push_back(make_stream("a lane of the staged pipeline"));
      joins_[role].push_back(untimed_event("join event"));
    }
  }
}

void StagedEngine::enqueue_side(uint32_t role, uint32_t direction, const void* src, void* dst, size_t bytes,
                                cudaStream_t stream) {
  const staging::Geometry& g = area_.layout.geometry;
  uint32_t* const abort = static_cast<uint32_t*>(state_.get()) + staging::kDirections * g.slots;
  const std::vector<std::vector<staging::Op>> plan = staging::plan_transfer(bytes, g, &position_[direction]);
  for (uint32_t lane = 0; lane < plan.size(); ++lane) {
    if (plan[lane].empty()) continue;
    const cudaStream_t lane_stream = lanes_[role][lane].get();
    cuda_check(cudaStreamWaitEvent(lane_stream, fork_.get(), 0), "forking a lane of the staged pipeline");
    for (const staging::Op& op : plan[lane]) {
      if (op.kind == staging::Op::kStep) {
        kernels::StagingStep s;
        if (op.signal_slot >= 0) {
          s.signal_flag = flag(direction, uint32_t(op.signal_slot), role);
          s.signal_count = count(direction, uint32_t(op.signal_slot));
        }
        if (op.wait_slot >= 0) {
          s.wait_flag = flag(direction, uint32_t(op.wait_slot), 1 - role);
          s.wait_count = count(direction, uint32_t(op.wait_slot));
          s.wait_slot = uint32_t(op.wait_slot);
        }
        s.direction = direction;
        s.role = role;
        s.epoch = epoch_;
        s.timeout_ns = timeout_ns_;
        s.abort = abort;
        s.fault = fault_record(uint32_t(rank_), true);
        kernels::enqueue_staging_step(s, lane_stream);
        continue;
      }
      char* slot = at(area_.host, area_.layout.slot_offset(direction, op.slot));
      if (role == kStagingSender)
        cuda_check(cudaMemcpyAsync(slot, static_cast<const char*>(src) + op.offset, op.bytes, cudaMemcpyDeviceToHost,
                                   lane_stream),
                   "enqueuing a staged copy into host memory");
      else
        cuda_check(cudaMemcpyAsync(static_cast<char*>(dst) + op.offset, slot, op.bytes, cudaMemcpyHostToDevice, lane_stream),
                   "enqueuing a staged copy out of host memory");
    }
    cuda_check(cudaEventRecord(joins_[role][lane].get(), lane_stream), "joining a lane of the staged pipeline");
    cuda_check(cudaStreamWaitEvent(stream, joins_[role][lane].get(), 0), "joining a lane of the staged pipeline");
  }
}

void StagedEngine::launch(const Transfer& t, cudaStream_t stream) {
  if (rank_ < 0) throw RuntimeFailure("the staged engine was launched before prepare()");
  cuda_check(cudaEventRecord(fork_.get(), stream), "forking the staged pipeline's lanes");
  if (send_direction_ >= 0) enqueue_side(kStagingSender, uint32_t(send_direction_), t.src, nullptr, t.bytes, stream);
  if (receive_direction_ >= 0) enqueue_side(kStagingReceiver, uint32_t(receive_direction_), nullptr, t.dst, t.bytes, stream);
}

std::optional<std::string> StagedEngine::fault() const {
  std::string what;
  for (uint32_t r = 0; r < staging::kRanks; ++r) {
    const auto* f = fault_record(r, false);
    if (__atomic_load_n(&f->epoch, __ATOMIC_ACQUIRE) != epoch_) continue;
    const uint32_t from = f->direction, to = 1 - f->direction;
    const bool sender = f->role == kStagingSender;
    char waited[32];
    std::snprintf(waited, sizeof waited, "%.1f s", double(f->waited_ns) * 1e-9);
    if (!what.empty()) what += "; ";
    what += "rank " + std::to_string(r) + " gave up after " + waited + " waiting for rank " +
            std::to_string(sender ? to : from) + " to " + (sender ? "drain" : "fill") + " slot " +
            std::to_string(f->slot) + " of the " + std::to_string(from) + "->" + std::to_string(to) +
            " staging ring (flag " + describe_flag(f->expected) + " expected, " + describe_flag(f->seen) + " seen" +
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
