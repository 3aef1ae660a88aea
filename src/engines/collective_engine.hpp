// What every collective method shares (the put-built ones of methods/collectives and NCCL's):
// the ranks, the operation's size, where each rank's input and output lie, the operands (f32 or
// bf16, as the method is registered) and the check of the result.
//
// A collective case's flows are every ordered pair of its ranks (pattern all_to_all, or a pair
// both ways): each rank runs one lane holding all of them, one launch per operation. In each
// rank's source buffer, the input starts at 0 and the output at output_offset() (the plan gives
// collective cases source buffers of twice their size, plan/device_memory.cpp); a rank's
// destination slot of the flow r -> me is where the two-shot algorithms stage what rank r sends
// it. The transfers launch_fused receives carry the addresses (transfer()); addresses_of()
// reads them back.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/bounded_copier.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "engines/transfer_engine.hpp"
#include "kernels/collective_data.hpp"
#include "kernels/rank_barrier.hpp"

namespace p2pbench {

// The registry entry of a collective method built from kernels (kind collective: its rows carry
// nccl-tests' figures; every rank's kernels wait for the others', so they run at once: two
// processes taking turns on one GPU cannot run it; recorded as push).
MethodInfo collective_method_info(const char* name, const char* title, const char* color, int order, Collective op,
                                  const char* help, std::vector<SweptAxis> swept);

// This rank's side of the per-block rank barriers (kernels/rank_barrier.hpp) of a kernel-built
// collective: its per-block counts and its header, reset with the barrier words at the start of
// its signal area before every sample (and before the first launch: the words may hold an
// earlier case's counts), and what a wait that gave up says.
class RankBarriers {
 public:
  explicit RankBarriers(double timeout_s) : timeout_s_(timeout_s) {}
  // Allocates on first use, then zeroes the words, counts and header on `stream`.
  void reset(const Endpoints& e, cudaStream_t stream);
  // Sets a launch's counts, header, timeout_ns and heartbeat. Throws before the first reset().
  template <class Launch>
  void fill(Launch& l) const {
    if (!counts_.get()) throw RuntimeFailure("a collective was launched before its barriers were reset");
    l.counts = static_cast<uint32_t*>(counts_.get());
    l.header = static_cast<kernels::BarrierHeader*>(header_.get());
    l.timeout_ns = uint64_t(timeout_s_ * 1e9);
    l.heartbeat = heartbeat_;
  }
  // Why a wait of the launches since the reset gave up, or nullopt. `ranks`: the case's ranks,
  // `me` this rank's index among them, `own_wait` what a wait for a word of its own waits for.
  std::optional<std::string> stalled(const std::vector<int>& ranks, int me, const char* own_wait);

 private:
  double timeout_s_;
  DeviceBuffer counts_, header_;
  BoundedCopier header_reader_;
  const uint64_t* heartbeat_ = nullptr;
};

class CollectiveEngine : public TransferEngine {
 public:
  explicit CollectiveEngine(const CaseSpec& c);

  // The case's ranks (2 to 8, every ordered pair among its flows) and a size that splits.
  std::optional<std::string> unsupported_reason(int device) const override;
  bool two_sided() const override { return true; }
  bool fuses_flows() const override { return true; }
  bool rotates_buffers() const override { return false; }
  void prepare(int device, int rank, const std::vector<Flow>& mine) override;
  // Outgoing flow me -> r: src = r's source buffer, dst = r's slot for the flow. Incoming flow
  // r -> me: src = this rank's source buffer, dst = its slot for the flow.
  Transfer transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const override;
  void* destination_region(const Endpoints& e) const override { return output_of(e.local_src); }
  void fill_source(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) override;
  void poison_destination(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) override;
  void before_sample(const Endpoints& e, uint64_t source_seed, cudaStream_t stream) override;
  // What one flow carries over the links: a chunk (all-reduce: a chunk each way of its two
  // phases), the figure nccl-tests' bus bandwidth assumes.
  uint64_t bytes_moved(const Flow&, uint64_t case_bytes) const override;
  void launch(const Transfer& t, cudaStream_t stream) override { launch_fused({t}, stream); }
  // The output against the reference of every rank's operands, once per sample (every incoming
  // flow names the same output).
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;

 protected:
  // Every rank's addresses as this rank reaches them, by rank index (the case's ranks in order).
  struct Addresses {
    void* base[kernels::kMaxCollectiveRanks] = {};     // source buffers: input at 0, output at output_offset()
    void* staging[kernels::kMaxCollectiveRanks] = {};  // rank r's slot for the flow me -> r
    void* inbox[kernels::kMaxCollectiveRanks] = {};    // this rank's slot for the flow r -> me
    void* signal[kernels::kMaxCollectiveRanks] = {};   // signal areas (common/signal_area.hpp)
  };
  // Throws RuntimeFailure unless `transfers` hold one flow each way with every other rank.
  Addresses addresses_of(const std::vector<Transfer>& transfers) const;

  Collective op() const { return op_; }
  CollectiveElement element() const { return element_; }  // the method's (registry)
  const CaseSpec& spec() const { return c_; }
  const std::vector<int>& ranks() const { return ranks_; }
  int me() const { return me_; }  // this rank's index among ranks()
  const CollectiveSize& size() const { return size_; }
  uint64_t output_offset() const;
  uint64_t output_bytes() const;  // of this rank's output
  void* output_of(void* base) const { return static_cast<char*>(base) + output_offset(); }
  // Every incoming flow names the same output, and the case loop poisons and checks per flow: true
  // at the first poison (check) of a sample, then false until the next before_sample().
  bool first_poison_of_sample() { return !std::exchange(poisoned_, true); }
  bool first_check_of_sample() { return !std::exchange(checked_, true); }

 private:
  int index_of(int rank) const;

  CaseSpec c_;
  Collective op_;
  CollectiveElement element_;
  std::vector<int> ranks_;
  CollectiveSize size_;
  int me_ = -1;
  int rank_ = -1;
  uint64_t seeds_[kernels::kMaxCollectiveRanks] = {};
  bool poisoned_ = false;  // this sample's output was poisoned
  bool checked_ = false;   // this sample's output was checked
};

}  // namespace p2pbench
