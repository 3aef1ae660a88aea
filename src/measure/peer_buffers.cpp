#include "measure/peer_buffers.hpp"

#include <cstring>
#include <utility>

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

PeerBuffers::PeerBuffers(const Communicator& comm, size_t capacity, std::optional<std::string> no_peer)
    : capacity_(capacity), src_(capacity, "the source buffer"), dst_(capacity, "the destination buffer"),
      no_peer_(std::move(no_peer)) {
  if (no_peer_) return;
  const std::string mine = handle_bytes(src_.get(), "source buffer") + handle_bytes(dst_.get(), "destination buffer");
  const auto all = comm.allgather(mine, "exchanging IPC handles");
  const std::string& peer = all[size_t(1 - comm.rank())];
  const size_t h = sizeof(cudaIpcMemHandle_t);
  std::string failure;
  try {
    peer_src_ = IpcMapping(handle_from(peer.substr(0, h)), "the peer's source buffer");
    peer_dst_ = IpcMapping(handle_from(peer.substr(h, h)), "the peer's destination buffer");
  } catch (const CudaError& e) {
    failure = "rank " + std::to_string(comm.rank()) + ": " + e.what();
  }
  // Every rank learns whether every rank could map: either all keep their mappings or none does.
  for (const std::string& f : comm.allgather(failure, "agreeing on the peer mappings")) {
    if (f.empty()) continue;
    no_peer_ = no_peer_.value_or("the GPUs of the two ranks cannot map each other's memory (no peer access between "
                                 "them: check `nvidia-smi topo -m`)") + "; " + f;
  }
  if (no_peer_) {
    peer_src_ = IpcMapping();
    peer_dst_ = IpcMapping();
  }
}

void PeerBuffers::close(const Communicator& comm) {
  peer_src_ = IpcMapping();
  peer_dst_ = IpcMapping();
  cuda_check(cudaDeviceSynchronize(), "finishing all work before freeing the buffers");
  comm.barrier("waiting for the peer to unmap this rank's buffers");
  src_ = DeviceBuffer();
  dst_ = DeviceBuffer();
}

}  // namespace p2pbench
