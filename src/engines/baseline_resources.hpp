// Session-wide resources of the baseline methods: the NCCL communicator and the staging area
// in host memory shared by the two ranks. The session brackets each baseline method's cases
// with begin()/end(), so that (for example) the NCCL communicator exists only while NCCL
// cases run and is destroyed before other methods run.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.hpp"
#include "engines/transfer_engine.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench {

class BaselineResources {
 public:
  virtual ~BaselineResources() = default;
  // Collective (every rank, same order). Returns why `method` cannot run here (NCCL missing
  // from the build, the shared-memory filesystem too small, ...), or nullopt. The same answer
  // on every rank.
  virtual std::optional<std::string> begin(Method method, const Communicator& comm) = 0;
  // Collective: releases what begin() made.
  virtual void end(Method method, const Communicator& comm) = 0;
  // The engine of a baseline case (after begin() of its method), or nullptr for other methods.
  virtual std::unique_ptr<TransferEngine> make_engine(const CaseSpec& c) = 0;
};

// `capacity`: the largest buffer footprint of the sweep; `device`: this rank's GPU.
std::unique_ptr<BaselineResources> make_baseline_resources(size_t capacity, int device);

}  // namespace p2pbench
