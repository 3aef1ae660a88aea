#include "device/peer_buffers.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <utility>

#include "common/cuda_check.hpp"
#include "common/event_wait.hpp"
#include "common/signal_area.hpp"
#include "common/typed_exchange.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// {"ms": max over ranks, "by_rank": each rank's}, or null where a rank has none (< 0).
json over_ranks(const std::vector<double>& ms) {
  if (ms.empty() || *std::min_element(ms.begin(), ms.end()) < 0) return json();
  return {{"ms", *std::max_element(ms.begin(), ms.end())}, {"by_rank", ms}};
}

}  // namespace

PeerBuffers::PeerBuffers(const Communicator& comm, const GroupLayout& layout, size_t slot_bytes, int destination_slots,
                         int signal_regions, std::optional<std::string> no_peer, Allocator allocator)
    : slot_bytes_(slot_bytes),
      slots_(destination_slots),
      rank_(comm.rank()),
      allocator_(allocator),
      peers_(size_t(comm.size())),
      no_peer_(std::move(no_peer)) {
  // map_ms is what a job pays before its first transfer: allocating, exporting, exchanging,
  // importing and mapping, and the agreement on the outcome.
  const Clock::time_point start = Clock::now();
  // Memory no peer will map is not exported: an export that would fail must not fail a run
  // that asked for no mapping (--no-p2p, one rank).
  const bool exported = !no_peer_;
  const std::string failure = allocate_own(signal_regions, exported);
  zero_signal_area();
  agree_on_allocation(comm, failure, exported);
  if (!no_peer_) {
    const std::string mine = src_->handle() + dst_->handle() + signals_->handle();
    open_peers(comm, layout, comm.allgather(mine, "exchanging the buffers' memory handles"));
  }
  record_mapping(comm, ms_since(start));
}

// This rank's three buffers from the allocator. Where vmm or fabric cannot allocate or export
// here (an unsupported GPU, no IMEX channel), they come from cudaMalloc instead, so that the
// methods needing no peer still run, and the failure is returned (empty: none).
std::string PeerBuffers::allocate_own(int signal_regions, bool exported) {
  const size_t signal_bytes = kSignalRegionBytes * size_t(signal_regions);
  try {
    memory_ = make_peer_memory(allocator_, current_device());
    src_ = memory_->allocate(slot_bytes_, "the source buffer", exported);
    dst_ = memory_->allocate(slot_bytes_ * size_t(slots_), "the destination buffer", exported);
    signals_ = memory_->allocate(signal_bytes, "the signal area", exported);
    if (allocator_ != Allocator::kLegacy) own_buffers_ = "cuMemCreate";
    return "";
  } catch (const PeerMemoryUnavailable& e) {
    // What was made is freed before cudaMalloc asks for the same amount again.
    src_.reset();
    dst_.reset();
    signals_.reset();
    memory_.reset();
    src_ = plain_device_memory(slot_bytes_, "the source buffer");
    dst_ = plain_device_memory(slot_bytes_ * size_t(slots_), "the destination buffer");
    signals_ = plain_device_memory(signal_bytes, "the signal area");
    return e.what();
  }
}

// On a stream of its own, waited for with a deadline: a synchronous cudaMemset has none.
void PeerBuffers::zero_signal_area() {
  Stream stream = make_stream("zeroing the signal area");
  cuda_check(cudaMemsetAsync(signals_->get(), 0, signals_->size(), stream.get()), "zeroing the signal area");
  wait_for_stream(stream.get(), kLocalWorkWaitS, "the zeroing of the signal area");
}

// Every rank learns whether every rank has exportable memory: a rank without it has no handle
// to give, so either every rank maps its peers or none does. legacy has no fallback (a failed
// cudaMalloc or export ends the run, as it always did), so nothing to agree on.
void PeerBuffers::agree_on_allocation(const Communicator& comm, const std::string& failure, bool exported) {
  if (allocator_ == Allocator::kLegacy) return;
  fallback_ = failures_by_rank(comm.allgather(failure, "agreeing on the exportable allocations"));
  if (!fallback_.empty() && exported) no_peer_ = no_shared_memory_reason(allocator_, fallback_);
}

void PeerBuffers::open_peers(const Communicator& comm, const GroupLayout& layout,
                             const std::vector<std::string>& handles) {
  const size_t h = memory_->handle_size();
  std::string failure;
  for (int r = 0; r < comm.size(); ++r) {
    Peer& p = peers_[size_t(r)];
    if (r == rank_) continue;
    // Across nodes only fabric handles reach the peer, and only within its NVLink domain.
    const bool reachable = layout.same_node(rank_, r) ||
                           (allocator_ == Allocator::kFabric && layout.fabric_memory && layout.same_domain(rank_, r));
    if (!reachable) {
      p.no_path = "ranks " + std::to_string(std::min(rank_, r)) + " and " + std::to_string(std::max(rank_, r)) +
                  " are on different nodes: no CUDA IPC path (nccl runs such pairs)";
      continue;
    }
    const std::string& theirs = handles[size_t(r)];
    const std::string of_rank = " of rank " + std::to_string(r);
    try {
      if (theirs.size() != 3 * h)
        throw RuntimeFailure("received " + std::to_string(theirs.size()) + " bytes of memory handles, expected " +
                             std::to_string(3 * h) + ": do all ranks run the same --allocator?");
      p.src = memory_->map_peer(theirs.substr(0, h), "the source buffer" + of_rank);
      p.dst = memory_->map_peer(theirs.substr(h, h), "the destination buffer" + of_rank);
      p.signals = memory_->map_peer(theirs.substr(2 * h, h), "the signal area" + of_rank);
    } catch (const RuntimeFailure& e) {  // CudaError (legacy), PeerMemoryUnavailable, a malformed handle
      failure = "rank " + std::to_string(rank_) + " mapping rank " + std::to_string(r) + ": " + e.what();
      break;
    }
  }
  // Every rank learns whether every rank could map: either all keep their mappings or none does.
  const std::string cannot = allocator_ == Allocator::kLegacy
                                 ? "the GPUs of the ranks cannot map each other's memory (no peer access between "
                                   "them: check `nvidia-smi topo -m`)"
                                 : std::string("the ranks cannot map each other's memory with --allocator ") +
                                       to_string(allocator_);
  for (const std::string& f : comm.allgather(failure, "agreeing on the peer mappings")) {
    if (f.empty()) continue;
    no_peer_ = no_peer_.value_or(cannot) + "; " + f;
  }
  memory_->stop_sharing();  // every rank has imported what it will: no descriptor is asked for again
  if (no_peer_)
    for (Peer& p : peers_) p = Peer();
}

// meta.peer_mapping from every rank's figures, so that every rank holds the same (any rank may
// write the file).
void PeerBuffers::record_mapping(const Communicator& comm, double ms) {
  const json mine = {{"ms", ms}, {"granularity", memory_ ? memory_->granularity() : 0}, {"own_buffers", own_buffers_}};
  const std::vector<json> all = gather_values(comm, mine, "gathering the peer mapping times");
  std::vector<double> ms_by_rank;
  uint64_t granularity = 0;
  std::set<std::string> own;
  for (const json& r : all) {
    ms_by_rank.push_back(r["ms"].get<double>());
    granularity = std::max(granularity, r["granularity"].get<uint64_t>());
    own.insert(r["own_buffers"].get<std::string>());
  }
  const json map = no_peer_ ? json() : over_ranks(ms_by_rank);
  mapping_ = {{"allocator", to_string(allocator_)},
              {"mapped", !no_peer_},
              {"map_ms", map.is_null() ? json() : map["ms"]},
              {"own_buffers", own.size() == 1 ? *own.begin() : "mixed"}};
  if (!map.is_null()) mapping_["map_ms_by_rank"] = map["by_rank"];
  if (granularity) mapping_["granularity_bytes"] = granularity;
  if (no_peer_) mapping_["reason"] = *no_peer_;
  // Under --no-p2p the fallback is not the reason there is no mapping, but still says why the
  // buffers are cudaMalloc's.
  if (!fallback_.empty() && (!no_peer_ || no_peer_->find(fallback_) == std::string::npos))
    mapping_["own_buffers_reason"] = fallback_;
}

void* PeerBuffers::peer_dst(int rank, int slot) const {
  void* base = pointer(peers_.at(size_t(rank)).dst);
  return base ? static_cast<char*>(base) + size_t(slot) * slot_bytes_ : nullptr;
}

std::optional<std::string> PeerBuffers::no_path_reason(int rank) const {
  if (rank == rank_) return std::nullopt;
  if (no_peer_) return no_peer_;
  return peers_.at(size_t(rank)).no_path;
}

// Timed on its own, after the device has finished every transfer that could touch the peers'
// memory, so unmap_ms is the unmapping alone. A rank that cannot (a GPU error) says so and
// reports no time (unmap_ms null); the others still meet it.
void PeerBuffers::unmap_peers(const Communicator& comm, bool unmap) {
  if (no_peer_) return;  // nothing is mapped (the same on every rank)
  constexpr double kFailed = -1, kNotAsked = -2;
  double ms = unmap ? kFailed : kNotAsked;
  try {
    if (unmap) {
      cuda_check(cudaDeviceSynchronize(), "finishing the work queued on the peers' memory");
      const Clock::time_point start = Clock::now();
      for (Peer& p : peers_) p = Peer();
      ms = ms_since(start);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "p2pbench: warning: rank %d: unmapping the peers' memory: %s\n", rank_, e.what());
  }
  const std::vector<double> all = gather_values(comm, ms, "gathering the peer unmapping times");
  if (std::find(all.begin(), all.end(), kNotAsked) != all.end()) return;
  const json timed = over_ranks(all);
  mapping_["unmap_ms"] = timed.is_null() ? json() : timed["ms"];
  if (!timed.is_null()) mapping_["unmap_ms_by_rank"] = timed["by_rank"];
}

void PeerBuffers::close(const Communicator& comm) {
  for (Peer& p : peers_) p = Peer();  // a no-op after unmap_peers()
  cuda_check(cudaDeviceSynchronize(), "finishing all work before freeing the buffers");
  comm.barrier("waiting for the peers to unmap this rank's buffers");
  src_.reset();
  dst_.reset();
  signals_.reset();
}

}  // namespace p2pbench
