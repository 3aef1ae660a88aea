// Session-wide resources of the baseline methods: the NCCL communicator (one over every rank)
// and the staging area in host memory shared by the ranks of a node. The session brackets each
// baseline method's cases with begin()/end(), so that (for example) the NCCL communicator
// exists only while NCCL cases run and is destroyed before other methods run. What they need
// from the other ranks comes through PeerGroup (common/peer_group.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/peer_group.hpp"
#include "engines/nccl_environment.hpp"
#include "engines/transfer_engine.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

class BaselineResources {
 public:
  virtual ~BaselineResources() = default;
  // Collective (every rank, same order). Returns why `method` cannot run here (NCCL missing
  // from the build, the shared-memory filesystem too small, ...), or nullopt. The same answer
  // on every rank.
  virtual std::optional<std::string> begin(Method method, const PeerGroup& peers) = 0;
  // Collective: releases what begin() made.
  virtual void end(Method method, const PeerGroup& peers) = 0;
  // The engine of a baseline case (after begin() of its method), or nullptr for other methods.
  // Every rank calls it for every baseline case, in the plan's order, whether or not it takes
  // part: the staged engines' epochs are counted by these calls and must agree between ranks.
  virtual std::unique_ptr<TransferEngine> make_engine(const CaseSpec& c) = 0;
  // What the first begin(kNccl) set in NCCL's environment on this rank, and the user's values
  // it kept (for the results' meta); empty before.
  virtual NcclEnvironment nccl_environment() const = 0;
};

// `capacity`: the largest buffer footprint of the sweep; `device`: this rank's GPU;
// `timeout_scale`: --timeout-scale, which the GPU-side waits of the staged ring honour too.
std::unique_ptr<BaselineResources> make_baseline_resources(size_t capacity, int device, double timeout_scale = 1.0);

}  // namespace p2pbench
