// Session-wide resources of the two baselines: the staging area (staged) and the NCCL
// communicator (nccl). begin() and end() are collective; every step of begin() ends with the
// ranks sharing their outcome, so that a failure on one rank makes every rank report the same
// reason (and no rank waits in a collective call the other never makes).
#include "engines/baseline_resources.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

#include "common/errors.hpp"
#include "engines/nccl_engine.hpp"
#include "engines/shared_host_memory.hpp"
#include "engines/staged_engine.hpp"
#include "measure/lock_step.hpp"

namespace p2pbench {

namespace {

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

// Runs `local` on this rank as one lock-step, so every rank learns every rank's outcome.
// Returns nullopt when all succeeded, else the same message on every rank: the failing ranks'
// messages, prefixed by their rank unless they all say the same.
std::optional<std::string> agree(const Communicator& comm, const char* what, const std::function<void()>& local) {
  const std::vector<nlohmann::json> results = LockStep(comm).run(what, [&](nlohmann::json& d) {
    try {
      local();
    } catch (const std::exception& e) {
      d["why"] = *e.what() ? e.what() : "failed";
    } catch (...) {
      d["why"] = "unknown error";
    }
  });
  std::vector<std::pair<size_t, std::string>> failed;
  for (size_t r = 0; r < results.size(); ++r)
    if (results[r]["data"].contains("why")) failed.emplace_back(r, results[r]["data"]["why"]);
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
  std::optional<std::string> begin(Method method, const Communicator& comm) override {
    if (method == Method::kStaged) return begin_staged(comm);
    if (method == Method::kNccl) return begin_nccl(comm);
    return std::nullopt;
  }

  void end(Method method, const Communicator&) override {
    if (method == Method::kStaged) {
      if (staging_) {
        // No copy or flag kernel may still touch the memory when it is unregistered.
        const cudaError_t err = cudaDeviceSynchronize();
        if (err != cudaSuccess) warn(std::string("waiting for the GPU before freeing the staging area: ") + cudaGetErrorString(err));
      }
      staging_ = SharedHostMemory();
      staged_reason_ = kNotBegun;
    } else if (method == Method::kNccl) {
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
    if (c.method == Method::kStaged) {
      if (staged_reason_) return std::make_unique<UnavailableEngine>(*staged_reason_);
      // Both ranks build the engine of every case in the same order: the epochs agree.
      if (++epoch_ == 0) epoch_ = 1;
      return std::make_unique<StagedEngine>(area_, epoch_);
    }
    if (c.method == Method::kNccl) {
      if (nccl_reason_) return std::make_unique<UnavailableEngine>(*nccl_reason_);
      return std::make_unique<NcclEngine>(*nccl_);
    }
    return nullptr;
  }

 private:
  static constexpr const char* kNotBegun = "the baseline's session resources were not set up";

  std::optional<std::string> begin_staged(const Communicator& comm) {
    staged_reason_ = run_begin_staged(comm);
    if (staged_reason_) staging_ = SharedHostMemory();
    return staged_reason_;
  }

  std::optional<std::string> run_begin_staged(const Communicator& comm) {
    staging::Layout layout;  // default geometry
    const uint64_t needed = layout.total_bytes();
    if (auto why = agree(comm, "checking room for the staging area", [&] {
          if (auto problem = shm_space_problem(SharedHostMemory::free_bytes(), needed, "staged"))
            throw RuntimeFailure(*problem);
        }))
      return why;
    // Rank 0 creates (and first-touches) the memory: the session has bound it near its GPU
    // before begin(), so the pages come from that NUMA node.
    std::string name;
    if (auto why = agree(comm, "creating the staging area", [&] {
          if (comm.rank() != 0) return;
          staging_ = SharedHostMemory::create(needed, "the staged baseline's staging area");
          name = staging_.name();
        }))
      return why;
    comm.broadcast(name, 0, "sharing the staging area's name");
    if (auto why = agree(comm, "opening the staging area", [&] {
          if (comm.rank() != 0) staging_ = SharedHostMemory::open(name, needed, "the staged baseline's staging area");
        }))
      return why;
    // Every rank holds a mapping now: the name can go.
    if (auto why = agree(comm, "registering the staging area", [&] {
          staging_.unlink();
          staging_.register_with_device();
        }))
      return why;
    area_ = StagingArea{staging_.host(), staging_.device(), layout};
    return std::nullopt;
  }

  std::optional<std::string> begin_nccl(const Communicator& comm) {
    nccl_reason_ = run_begin_nccl(comm);
    if (nccl_reason_) nccl_.reset();
    return nccl_reason_;
  }

  std::optional<std::string> run_begin_nccl(const Communicator& comm) {
    if (!nccl_in_build()) return std::string(kNoNcclReason);
    if (auto why = agree(comm, "setting NCCL's environment", [&] { apply_nccl_environment(); })) return why;
    std::string id;
    if (auto why = agree(comm, "creating the NCCL unique id", [&] {
          if (comm.rank() == 0) id = NcclCommunicator::unique_id();
        }))
      return why;
    comm.broadcast(id, 0, "sharing the NCCL unique id");
    if (auto why = agree(comm, "creating the NCCL communicator", [&] {
          nccl_ = std::make_unique<NcclCommunicator>(id, comm.size(), comm.rank());
        }))
      return "nccl: " + *why;
    return std::nullopt;
  }

  // staged
  SharedHostMemory staging_;
  StagingArea area_;
  uint32_t epoch_ = 0;
  std::optional<std::string> staged_reason_ = std::string(kNotBegun);
  // nccl
  std::unique_ptr<NcclCommunicator> nccl_;
  std::optional<std::string> nccl_reason_ = std::string(kNotBegun);
};

}  // namespace

std::unique_ptr<BaselineResources> make_baseline_resources(size_t, int) { return std::make_unique<Baselines>(); }

}  // namespace p2pbench
