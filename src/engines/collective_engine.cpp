#include "engines/collective_engine.hpp"

#include <algorithm>
#include <set>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "plan/device_memory.hpp"

namespace p2pbench {

namespace {

std::vector<int> ranks_of(const std::vector<Flow>& flows) {
  std::set<int> ranks;
  for (const Flow& f : flows) ranks.insert({f.src_rank, f.dst_rank});
  return {ranks.begin(), ranks.end()};
}

}  // namespace

void RankBarriers::reset(const Endpoints& e, cudaStream_t stream) {
  heartbeat_ = e.heartbeat;
  if (!counts_.get()) {
    counts_ = DeviceBuffer(kernels::kMaxBarrierBlocks * sizeof(uint32_t), "the rank barriers' counts");
    header_ = DeviceBuffer(sizeof(kernels::BarrierHeader), "the rank barriers' header");
  }
  kernels::reset_barriers(static_cast<uint32_t*>(e.local_signal_area), static_cast<uint32_t*>(counts_.get()),
                          static_cast<kernels::BarrierHeader*>(header_.get()), stream);
}

std::optional<std::string> RankBarriers::stalled(const std::vector<int>& ranks, int me, const char* own_wait) {
  if (!header_.get()) return std::nullopt;
  const auto h = header_reader_.read(static_cast<const kernels::BarrierHeader*>(header_.get()), "the rank barriers' header");
  if (!h.timed_out) return std::nullopt;
  const std::string who = "block " + std::to_string(h.block) + " of rank " + std::to_string(ranks.at(size_t(me))) +
                          " waited more than " + std::to_string(int(timeout_s_)) + " s ";
  if (h.peer == kernels::kNoPeer) return who + "for " + own_wait + " (value " + std::to_string(h.count) + ")";
  return who + "at a barrier for rank " + std::to_string(ranks.at(h.peer)) + " (barrier " + std::to_string(h.count) +
         " of the sample)";
}

MethodInfo collective_method_info(const char* name, const char* title, const char* color, int order, Collective op,
                                  const char* help, std::vector<SweptAxis> swept) {
  MethodInfo m{Method{}, name, MethodKind::kCollective, {}, title, color, order, false,
               "its kernels wait at barriers for their peers' kernels", help, std::move(swept)};
  m.needs_both_ends_running = true;
  m.push_only = true;
  m.collective = op;
  return m;
}

CollectiveEngine::CollectiveEngine(const CaseSpec& c)
    : c_(c),
      op_(method_info(c.method).collective),
      element_(method_info(c.method).collective_element),
      ranks_(ranks_of(c.flows)) {
  if (auto s = collective_size(op_, c.bytes, int(ranks_.size()), element_)) size_ = *s;
}

std::optional<std::string> CollectiveEngine::unsupported_reason(int) const {
  const size_t n = ranks_.size();
  if (n < 2 || n > size_t(kernels::kMaxCollectiveRanks))
    return "a collective runs on 2 to " + std::to_string(kernels::kMaxCollectiveRanks) + " ranks (this case has " +
           std::to_string(n) + ")";
  std::set<std::pair<int, int>> pairs;
  for (const Flow& f : c_.flows)
    if (f.src_rank != f.dst_rank) pairs.insert({f.src_rank, f.dst_rank});
  if (pairs.size() != n * (n - 1))
    return "a collective needs a flow each way between every two of its ranks (pattern all_to_all, or a pair "
           "both ways)";
  if (size_.elements == 0)
    return std::string("bytes (") + std::to_string(c_.bytes) + ") hold no whole chunk of " + to_string(element_) +
           " per rank for " +
           to_string(op_) + " over " + std::to_string(n) + " ranks";
  return std::nullopt;
}

void CollectiveEngine::prepare(int, int rank, const std::vector<Flow>&) {
  rank_ = rank;
  me_ = index_of(rank);
}

int CollectiveEngine::index_of(int rank) const {
  const auto at = std::find(ranks_.begin(), ranks_.end(), rank);
  if (at == ranks_.end()) throw RuntimeFailure("rank " + std::to_string(rank) + " takes no part in " + c_.name());
  return int(at - ranks_.begin());
}

uint64_t CollectiveEngine::output_offset() const {
  return *buffer_slot_stride(input_elements(op_, size_) * element_bytes(element_));
}

Transfer CollectiveEngine::transfer(Direction, const Endpoints& e, uint64_t, size_t bytes) const {
  Transfer t;
  const bool outgoing = e.flow.src_rank == e.rank;
  t.src = outgoing ? e.peer_src : e.local_src;
  t.dst = outgoing ? e.peer_dst : e.local_dst;
  t.bytes = bytes;
  t.flow = e.flow;
  t.local_signal_area = e.local_signal_area;
  t.peer_signal_area = e.peer_signal_area;
  return t;
}

CollectiveEngine::Addresses CollectiveEngine::addresses_of(const std::vector<Transfer>& transfers) const {
  Addresses a;
  std::set<std::pair<int, bool>> seen;  // (peer, outgoing)
  for (const Transfer& t : transfers) {
    const bool outgoing = t.flow.src_rank == rank_;
    const int peer = index_of(outgoing ? t.flow.dst_rank : t.flow.src_rank);
    seen.insert({peer, outgoing});
    a.signal[me_] = t.local_signal_area;
    if (outgoing) {
      a.base[peer] = const_cast<void*>(t.src);
      a.staging[peer] = t.dst;
      a.signal[peer] = t.peer_signal_area;
    } else {
      a.base[me_] = const_cast<void*>(t.src);
      a.inbox[peer] = t.dst;
    }
  }
  if (seen.size() != 2 * (ranks_.size() - 1))
    throw RuntimeFailure("rank " + std::to_string(rank_) + " launched " + c_.name() + " without a flow each way with every other rank");
  return a;
}

void CollectiveEngine::fill_source(void* region, size_t, uint64_t seed, cudaStream_t stream) {
  const uint64_t elements = input_elements(op_, size_);
  if (element_ == CollectiveElement::kBf16)
    return kernels::fill_collective_input(static_cast<__nv_bfloat16*>(region), elements, seed, stream);
  kernels::fill_collective_input(static_cast<float*>(region), elements, seed, stream);
}

void CollectiveEngine::poison_destination(void* region, size_t, uint64_t, cudaStream_t stream) {
  if (!first_poison_of_sample()) return;
  kernels::poison_collective_output(region, output_bytes(), stream, element_);
}

uint64_t CollectiveEngine::output_bytes() const { return output_elements(op_, size_) * element_bytes(element_); }

void CollectiveEngine::before_sample(const Endpoints& e, uint64_t source_seed, cudaStream_t) {
  seeds_[index_of(e.flow.src_rank)] = source_seed;
  poisoned_ = checked_ = false;
}

uint64_t CollectiveEngine::bytes_moved(const Flow&, uint64_t) const {
  const uint64_t chunk = size_.chunk_elements * element_bytes(element_);
  return op_ == Collective::kAllReduce ? 2 * chunk : chunk;
}

std::optional<std::string> CollectiveEngine::verify(const void* dst, size_t, uint64_t, uint64_t, cudaStream_t stream) {
  if (!first_check_of_sample()) return std::nullopt;
  kernels::CollectiveReference ref;
  ref.op = op_;
  ref.size = size_;
  ref.ranks = int(ranks_.size());
  ref.me = me_;
  std::copy(std::begin(seeds_), std::end(seeds_), std::begin(ref.seeds));
  const auto check = [&](kernels::PatternCheck* r) {
    if (element_ == CollectiveElement::kBf16)
      return kernels::check_collective_output(static_cast<const __nv_bfloat16*>(dst), ref, r, stream);
    kernels::check_collective_output(static_cast<const float*>(dst), ref, r, stream);
  };
  if (auto bad = run_device_check(check, output_bytes(), stream))
    return std::string("the ") + to_string(op_) + "'s output: " + *bad;
  return std::nullopt;
}

}  // namespace p2pbench
