// Session-wide resources of the two baselines: the staging areas (staged: one per node) and
// the NCCL communicator (nccl: one over every rank). begin() and end() are collective; every
// step of begin() ends with the ranks sharing their outcome, so that a failure on one rank makes
// every rank report the same reason (and no rank waits in a collective call another never
// makes).
#include "engines/baseline_resources.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/host_heartbeat.hpp"
#include "engines/nccl_engine.hpp"
#include "engines/shared_host_memory.hpp"
#include "engines/staged_engine.hpp"

namespace p2pbench {

namespace {

// How long one of NCCL's background steps (connecting, enqueuing a group, finalizing) may take
// before the communicator is aborted: seconds on one node when every peer runs.
constexpr double kNcclStepS = 60.0;

// An engine that only says why its method cannot run here (the case is then `skipped`).
class UnavailableEngine final : public TwoSidedEngine {
 public:
  explicit UnavailableEngine(std::string why) : why_(std::move(why)) {}
  std::optional<std::string> unsupported_reason(int) const override { return why_; }
  void prepare(int, int, const std::vector<Flow>&) override {}
  void launch(const Transfer&, cudaStream_t) override { throw RuntimeFailure(why_); }

 private:
  std::string why_;
};

// The PCI bus id of this rank's GPU ("0000:00:06.0").
std::string current_gpu_bus_id() {
  char bus[32] = {};
  cuda_check(cudaDeviceGetPCIBusId(bus, sizeof bus, current_device()), "reading the GPU's PCI bus id");
  return bus;
}

// Runs `local` on this rank, then shares every rank's outcome (an empty string: success).
// Returns nullopt when all succeeded, else the same message on every rank: the failing ranks'
// messages, prefixed by their rank unless they all say the same.
std::optional<std::string> agree(const PeerGroup& peers, const char* what, const std::function<void()>& local) {
  std::string why;
  try {
    local();
  } catch (const std::exception& e) {
    why = *e.what() ? e.what() : "failed";
  } catch (...) {
    why = "unknown error";
  }
  const std::vector<std::string> results = peers.exchange(why, what);
  std::vector<std::pair<size_t, std::string>> failed;
  for (size_t r = 0; r < results.size(); ++r)
    if (!results[r].empty()) failed.emplace_back(r, results[r]);
  if (failed.empty()) return std::nullopt;
  if (std::all_of(failed.begin(), failed.end(), [&](const auto& f) { return f.second == failed.front().second; }))
    return failed.front().second;
  std::string joined;
  for (const auto& [rank, message] : failed) joined += (joined.empty() ? "" : "; ") + ("rank " + std::to_string(rank) + ": " + message);
  return joined;
}

void warn(const std::string& message) { std::fprintf(stderr, "p2pbench: warning: %s\n", message.c_str()); }

class Baselines final : public BaselineResources {
 public:
  explicit Baselines(double timeout_scale) : timeout_scale_(timeout_scale) {}

  std::optional<std::string> begin(Method method, const PeerGroup& peers) override {
    if (method_info(method).needs_staging_area) return begin_staged(method, peers);
    if (method_info(method).needs_nccl) return begin_nccl(peers);
    return std::nullopt;
  }

  NcclEnvironment nccl_environment() const override { return nccl_environment_.value_or(NcclEnvironment{}); }

  void end(Method method, const PeerGroup&) override {
    if (method_info(method).needs_staging_area) {
      if (staging_) {
        // No copy or flag kernel may still touch the memory when it is unregistered.
        const cudaError_t err = cudaDeviceSynchronize();
        if (err != cudaSuccess) warn(std::string("waiting for the GPU before freeing the staging area: ") + cudaGetErrorString(err));
      }
      staging_ = SharedHostMemory();
      staged_reason_ = kNotBegun;
    } else if (method_info(method).needs_nccl) {
      if (nccl_) {
        try {
          nccl_->close();
        } catch (const std::exception& e) {
          warn(e.what());
        }
        nccl_.reset();
      }
      nccl_reason_ = kNotBegun;
    }
  }

  std::unique_ptr<TransferEngine> make_engine(const CaseSpec& c) override {
    if (method_info(c.method).needs_staging_area) {
      if (staged_reason_) return std::make_unique<UnavailableEngine>(*staged_reason_);
      // Every rank builds the engine of every case in the same order: the epochs agree.
      if (++epoch_ == 0) epoch_ = 1;
      return std::make_unique<StagedEngine>(area_, epoch_, StagedEngine::kDefaultTimeoutS * timeout_scale_);
    }
    if (method_info(c.method).needs_nccl) {
      if (nccl_reason_) return std::make_unique<UnavailableEngine>(*nccl_reason_);
      if (is_collective(c.method)) return make_nccl_collective_engine(*nccl_, c);
      return std::make_unique<NcclEngine>(*nccl_);
    }
    return nullptr;
  }

 private:
  static constexpr const char* kNotBegun = "the baseline's session resources were not set up";

  std::optional<std::string> begin_staged(Method method, const PeerGroup& peers) {
    staged_reason_ = run_begin_staged(method, peers);
    if (staged_reason_) staging_ = SharedHostMemory();
    return staged_reason_;
  }

  // One staging area per node, with a region per rank of the node.
  std::optional<std::string> run_begin_staged(Method method, const PeerGroup& peers) {
    const std::vector<int> node = peers.node_ranks();
    staging::Layout layout;  // default geometry
    layout.regions = uint32_t(node.size());
    const uint64_t needed = layout.total_bytes();
    if (auto why = agree(peers, "checking room for the staging area", [&] {
          if (auto problem = shm_space_problem(SharedHostMemory::free_bytes(), needed, to_string(method)))
            throw RuntimeFailure(*problem);
        }))
      return why;
    // The node's lowest rank creates (and first-touches) the memory: the session has bound it
    // near its GPU before begin(), so the pages come from that NUMA node.
    const bool creator = peers.rank() == node.front();
    std::string name;
    if (auto why = agree(peers, "creating the staging areas", [&] {
          if (!creator) return;
          staging_ = SharedHostMemory::create(needed, "the staged baseline's staging area");
          name = staging_.name();
        }))
      return why;
    name = peers.exchange(name, "sharing the staging areas' names").at(size_t(node.front()));
    if (auto why = agree(peers, "opening the staging areas", [&] {
          if (!creator) staging_ = SharedHostMemory::open(name, needed, "the staged baseline's staging area");
        }))
      return why;
    // Every rank holds a mapping now: the names can go.
    if (auto why = agree(peers, "registering the staging areas", [&] {
          staging_.unlink();
          staging_.register_with_device();
        }))
      return why;
    heartbeat_ = std::make_unique<HostHeartbeat>();
    area_ = StagingArea{staging_.host(), staging_.device(), layout, node, heartbeat_->device_word()};
    counters_ = DeviceBuffer(area_.counter_bytes(), "the staged pipeline's counters");
    area_.counters = static_cast<uint32_t*>(counters_.get());
    streams_ = std::make_unique<StagingStreams>(layout.geometry.lanes);
    area_.streams = streams_.get();
    return std::nullopt;
  }

  std::optional<std::string> begin_nccl(const PeerGroup& peers) {
    nccl_reason_ = run_begin_nccl(peers);
    if (nccl_reason_) nccl_.reset();
    return nccl_reason_;
  }

  // Decided at the first begin(kNccl) and kept: NCCL reads its environment once per process,
  // and a later begin() must not take the values set here for the user's.
  std::optional<std::string> set_nccl_environment(const PeerGroup& peers) {
    std::string host;
    if (auto why = agree(peers, "reading the host name for NCCL", [&] { host = local_host_name(); })) return why;
    NcclPlacement placement{peers.rank(), peers.exchange(host, "sharing the host names for NCCL"), {}};
    for (int r = 0; r < peers.size(); ++r) placement.node_of_rank.push_back(peers.node_of(r));
    return agree(peers, "setting NCCL's environment", [&] {
      if (nccl_environment_) return;
      const NcclEnvironment env = decide_nccl_environment(placement, [](const char* name) { return std::getenv(name); });
      apply_nccl_environment(env);
      nccl_environment_ = env;
    });
  }

  // Decided before NCCL is called: where ranks share a GPU, NCCL's refusal reaches only them.
  std::optional<std::string> shared_gpu(const PeerGroup& peers) {
    std::string bus;
    if (auto why = agree(peers, "reading the GPU's PCI bus id for NCCL", [&] { bus = current_gpu_bus_id(); })) return why;
    NcclPlacement placement{peers.rank(), {}, {}};
    for (int r = 0; r < peers.size(); ++r) placement.node_of_rank.push_back(peers.node_of(r));
    return shared_gpu_reason(placement, peers.exchange(bus, "sharing the GPUs' PCI bus ids for NCCL"));
  }

  std::optional<std::string> run_begin_nccl(const PeerGroup& peers) {
    if (!nccl_in_build()) return std::string(kNoNcclReason);
    if (auto why = shared_gpu(peers)) return why;
    if (auto why = set_nccl_environment(peers)) return why;
    std::string id;
    if (auto why = agree(peers, "creating the NCCL unique id", [&] {
          if (peers.rank() == 0) id = NcclCommunicator::unique_id();
        }))
      return why;
    peers.broadcast(id, 0, "sharing the NCCL unique id");
    if (auto why = agree(peers, "creating the NCCL communicator", [&] {
          nccl_ = std::make_unique<NcclCommunicator>(id, peers.size(), peers.rank(), kNcclStepS * timeout_scale_,
                                                   [&peers] { return peers.peer_not_running(); });
        }))
      return "nccl: " + *why;
    return std::nullopt;
  }

  // staged
  SharedHostMemory staging_;
  std::unique_ptr<HostHeartbeat> heartbeat_;
  DeviceBuffer counters_;  // every staged engine's, one case at a time: no cudaFree between cases
  std::unique_ptr<StagingStreams> streams_;  // and their streams: none made while a ring spins
  StagingArea area_;
  uint32_t epoch_ = 0;
  double timeout_scale_ = 1.0;  // --timeout-scale: the GPU-side waits of the staged ring stretch with it
  std::optional<std::string> staged_reason_ = std::string(kNotBegun);
  // nccl
  std::unique_ptr<NcclCommunicator> nccl_;
  std::optional<std::string> nccl_reason_ = std::string(kNotBegun);
  std::optional<NcclEnvironment> nccl_environment_;
};

}  // namespace

std::unique_ptr<BaselineResources> make_baseline_resources(size_t, int, double timeout_scale) {
  return std::make_unique<Baselines>(timeout_scale);
}

}  // namespace p2pbench
