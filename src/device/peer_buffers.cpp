#include "device/peer_buffers.hpp"

#include <cstring>
#include <utility>

#include "common/signal_area.hpp"

namespace p2pbench {

namespace {

std::string handle_bytes(void* ptr, const char* what) {
  cudaIpcMemHandle_t handle;
  cuda_check(cudaIpcGetMemHandle(&handle, ptr), std::string("exporting the IPC handle of the ") + what);
  return std::string(reinterpret_cast<const char*>(&handle), sizeof handle);
}

cudaIpcMemHandle_t handle_from(const std::string& bytes) {
  cudaIpcMemHandle_t handle;
  if (bytes.size() != sizeof handle) throw RuntimeFailure("received an IPC handle of the wrong size");
  std::memcpy(&handle, bytes.data(), sizeof handle);
  return handle;
}

}  // namespace

PeerBuffers::PeerBuffers(const Communicator& comm, const GroupLayout& layout, size_t slot_bytes, int destination_slots,
                         int signal_regions, std::optional<std::string> no_peer)
    : slot_bytes_(slot_bytes),
      slots_(destination_slots),
      rank_(comm.rank()),
      src_(slot_bytes, "the source buffer"),
      dst_(slot_bytes * size_t(destination_slots), "the destination buffer"),
      signals_(kSignalRegionBytes * size_t(signal_regions), "the signal area"),
      peers_(size_t(comm.size())),
      no_peer_(std::move(no_peer)) {
  cuda_check(cudaMemset(signals_.get(), 0, signals_.size()), "zeroing the signal area");
  if (no_peer_) return;
  const std::string mine = handle_bytes(src_.get(), "source buffer") + handle_bytes(dst_.get(), "destination buffer") +
                           handle_bytes(signals_.get(), "signal area");
  open_peers(comm, layout, comm.allgather(mine, "exchanging IPC handles"));
}

void PeerBuffers::open_peers(const Communicator& comm, const GroupLayout& layout, const std::vector<std::string>& handles) {
  const size_t h = sizeof(cudaIpcMemHandle_t);
  std::string failure;
  for (int r = 0; r < comm.size(); ++r) {
    Peer& p = peers_[size_t(r)];
    if (r == rank_) continue;
    if (!layout.same_node(rank_, r)) {
      p.no_path = "ranks " + std::to_string(std::min(rank_, r)) + " and " + std::to_string(std::max(rank_, r)) +
                  " are on different nodes: no CUDA IPC path (nccl runs such pairs)";
      continue;
    }
    try {
      p.src = IpcMapping(handle_from(handles[size_t(r)].substr(0, h)), "the source buffer of rank " + std::to_string(r));
      p.dst = IpcMapping(handle_from(handles[size_t(r)].substr(h, h)), "the destination buffer of rank " + std::to_string(r));
      p.signals = IpcMapping(handle_from(handles[size_t(r)].substr(2 * h, h)), "the signal area of rank " + std::to_string(r));
    } catch (const CudaError& e) {
      failure = "rank " + std::to_string(rank_) + " mapping rank " + std::to_string(r) + ": " + e.what();
      break;
    }
  }
  // Every rank learns whether every rank could map: either all keep their mappings or none does.
  for (const std::string& f : comm.allgather(failure, "agreeing on the peer mappings")) {
    if (f.empty()) continue;
    no_peer_ = no_peer_.value_or("the GPUs of the ranks cannot map each other's memory (no peer access between "
                                 "them: check `nvidia-smi topo -m`)") + "; " + f;
  }
  if (no_peer_)
    for (Peer& p : peers_) p = Peer();
}

void* PeerBuffers::peer_dst(int rank, int slot) const {
  void* base = peers_.at(size_t(rank)).dst.get();
  return base ? static_cast<char*>(base) + size_t(slot) * slot_bytes_ : nullptr;
}

std::optional<std::string> PeerBuffers::no_path_reason(int rank) const {
  if (rank == rank_) return std::nullopt;
  if (no_peer_) return no_peer_;
  return peers_.at(size_t(rank)).no_path;
}

void PeerBuffers::close(const Communicator& comm) {
  for (Peer& p : peers_) p = Peer();
  cuda_check(cudaDeviceSynchronize(), "finishing all work before freeing the buffers");
  comm.barrier("waiting for the peers to unmap this rank's buffers");
  src_ = DeviceBuffer();
  dst_ = DeviceBuffer();
  signals_ = DeviceBuffer();
}

}  // namespace p2pbench
