// The tokens methods: expert-parallel dispatch and combine between GPUs, as DeepEP's intra-node
// kernels move them, built on put_signal (each token is a chunk, put and then signalled).
//   tokens_dispatch_ldst / _tma  each rank sends each of its tokens once to every other rank that
//                                owns one of its top-k experts, into that rank's block for it
//   tokens_combine_ldst / _tma   each rank returns the tokens it received; the tokens' own rank
//                                adds the returned copies (bf16, summed in f32 in rank order)
// A case's bytes are one rank's tokens: tokens x chunk_bytes, chunk_bytes being the token's
// bytes (DeepSeek-V3: 7168 bf16 = 14 KiB). The router (token_routing.hpp) is DeepSeek-V3's shape,
// 256 experts and top-8, seeded, uniform or Zipf-skewed; the ranks are those up to the case's
// highest rank. A flow carries what the router sends from its source to its destination, and
// its figure counts those bytes only: tokens routed to their own rank are not moved (DeepEP
// copies them locally and counts them apart). `blocks` is the sender's SMs per destination; the
// combine's reduction runs on as many.
#include <algorithm>
#include <utility>

#include "common/bounded_copier.hpp"
#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "engines/engine_registry.hpp"
#include "methods/put_signal/put_signal_engine.hpp"
#include "methods/tokens/token_kernels.hpp"
#include "methods/tokens/token_routing.hpp"

namespace p2pbench::tokens {
namespace {

using put_signal::Sender;

enum class Phase { kDispatch, kCombine };

constexpr uint32_t kExperts = 256, kTopK = 8;  // DeepSeek-V3
constexpr uint64_t kRouterSeed = 1;

// Every rank's routing, the same on every rank.
struct Routes {
  int ranks = 0;
  uint64_t tokens = 0;
  std::vector<Routing> by_source;
  TokenLayout layout{{}};
};

RouterSpec router_of(const CaseSpec& c) {
  RouterSpec spec;
  spec.tokens_per_rank = c.chunk_bytes && *c.chunk_bytes ? c.bytes / *c.chunk_bytes : 0;
  spec.experts = kExperts;
  spec.top_k = kTopK;
  const uint64_t skew = c.routing_skew.value_or(0);
  spec.skew = skew == 0 ? Skew::kUniform : Skew::kZipf;
  spec.zipf_exponent = double(skew) / 100.0;
  spec.seed = kRouterSeed;
  return spec;
}

int ranks_of(const CaseSpec& c) {
  int highest = 0;
  for (const Flow& f : c.flows) highest = std::max({highest, f.src_rank, f.dst_rank});
  return highest + 1;
}

class TokensEngine final : public put_signal::PutSignalEngine {
 public:
  TokensEngine(Sender sender, Phase phase, const CaseSpec& c) : PutSignalEngine(sender, c), phase_(phase) {
    bf16_tokens_ = true;
  }

  std::optional<std::string> unsupported_reason(int device) const override {
    const CaseSpec& c = spec();
    const uint64_t hidden = c.chunk_bytes.value_or(0);
    if (hidden == 0 || c.bytes % hidden != 0)
      return "bytes (" + std::to_string(c.bytes) + ") must be whole tokens of chunk_bytes (" + std::to_string(hidden) +
             " bytes each)";
    if (c.bytes / hidden >= kNoSlot) return "more tokens than a 32-bit index counts";
    if (ranks_of(c) > kMaxTokenRanks) return "tokens cases route over at most " + std::to_string(kMaxTokenRanks) + " ranks";
    const std::string problem = router_of(c).problem(ranks_of(c));
    if (!problem.empty()) return problem;
    return PutSignalEngine::unsupported_reason(device);
  }

  bool fuses_flows() const override { return phase_ == Phase::kCombine; }

  uint64_t bytes_moved(const Flow& f, uint64_t) const override { return flow_tokens(f) * hidden(); }

  void fill_source(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) override {
    fill_tokens(region, bytes, seed, stream);
  }

  void prepare(int device, int rank, const std::vector<Flow>& mine) override {
    PutSignalEngine::prepare(device, rank, mine);
    if (phase_ == Phase::kDispatch)
      for (const Flow& f : mine) gathers_.emplace_back(f, upload(tokens_sent(f), "a flow's token indices"));
    if (phase_ == Phase::kCombine) prepare_combine(rank, mine.size());
  }

  void before_sample(const Endpoints& e, uint64_t source_seed, cudaStream_t stream) override {
    PutSignalEngine::before_sample(e, source_seed, stream);
    if (e.flow.dst_rank != e.rank) return;
    combine_.returned[e.flow.src_rank] = static_cast<const uint8_t*>(e.local_dst);
    combine_.seed[e.flow.src_rank] = source_seed;
  }

  void launch(const Transfer& t, cudaStream_t stream) override {
    if (phase_ == Phase::kCombine) return launch_fused({t}, stream);
    PutSignalEngine::launch(t, stream);
  }

  // The combine: every send and receive of this rank at once (forked streams), then the sum.
  void launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) override {
    cuda_check(cudaEventRecord(fork_.get(), stream), "forking the combine's flows");
    bool receives = false;
    for (size_t i = 0; i < transfers.size(); ++i) {
      const cudaStream_t lane = forks_.at(i).get();
      cuda_check(cudaStreamWaitEvent(lane, fork_.get(), 0), "forking a combine flow");
      PutSignalEngine::launch(transfers[i], lane);
      cuda_check(cudaEventRecord(joins_.at(i).get(), lane), "joining a combine flow");
      cuda_check(cudaStreamWaitEvent(stream, joins_.at(i).get(), 0), "joining a combine flow");
      receives = receives || !sends(transfers[i].flow);
    }
    if (receives) combine_reduce(out_.get(), combine_, *spec().blocks, stream);
  }

  std::optional<int> measure_sms_used(const Transfer& t, cudaStream_t stream) override {
    if (phase_ == Phase::kCombine) return *spec().blocks;
    return PutSignalEngine::measure_sms_used(t, stream);
  }

  std::optional<std::string> verify(const void* dst, size_t, uint64_t, uint64_t, cudaStream_t stream) override {
    if (auto bad = spot_check_failures(dst)) return bad;
    const auto [flow, seed] = received_at(dst);
    const uint32_t* gather = phase_ == Phase::kDispatch ? gather_of(flow) : nullptr;
    if (auto bad = run_device_check([&](kernels::PatternCheck* r) {
          check_tokens(dst, flow_tokens(flow), uint32_t(hidden()), gather, seed, r, stream);
        }, flow_tokens(flow) * hidden(), stream))
      return "tokens from rank " + std::to_string(flow.src_rank) + ": " + *bad;
    if (phase_ == Phase::kDispatch) return std::nullopt;
    if (auto bad = run_device_check([&](kernels::PatternCheck* r) { check_combined(out_.get(), combine_, r, stream); },
                                    routes().tokens * hidden(), stream))
      return "the combined tokens: " + *bad;
    return std::nullopt;
  }

 private:
  uint64_t hidden() const { return *spec().chunk_bytes; }

  const Routes& routes() const {
    if (!routes_) {
      Routes r;
      r.ranks = ranks_of(spec());
      const RouterSpec router = router_of(spec());
      r.tokens = router.tokens_per_rank;
      for (int src = 0; src < r.ranks; ++src) r.by_source.push_back(route(router, r.ranks, src));
      r.layout = TokenLayout(r.by_source);
      routes_ = std::move(r);
    }
    return *routes_;
  }

  // Tokens one transfer of `f` carries: dispatch sends the source's tokens routed to the
  // destination; combine returns the destination's tokens the source received.
  uint64_t flow_tokens(const Flow& f) const {
    return phase_ == Phase::kDispatch ? routes().layout.count(f.src_rank, f.dst_rank)
                                      : routes().layout.count(f.dst_rank, f.src_rank);
  }

  FlowShape flow_shape(const Flow& f) const override {
    return {flow_tokens(f) * hidden(), phase_ == Phase::kDispatch ? gather_of(f) : nullptr};
  }

  // Dispatch: the source's tokens routed to the destination, in token order.
  std::vector<uint32_t> tokens_sent(const Flow& f) const {
    const std::vector<uint64_t> slots = slots_in_block(routes().by_source.at(size_t(f.src_rank)), f.dst_rank);
    std::vector<uint32_t> tokens;
    for (uint64_t t = 0; t < slots.size(); ++t)
      if (slots[t] != kNotSent) tokens.push_back(uint32_t(t));
    return tokens;
  }

  const uint32_t* gather_of(const Flow& f) const {
    for (const auto& [flow, buffer] : gathers_)
      if (flow == f) return static_cast<const uint32_t*>(buffer.get());
    throw RuntimeFailure("the tokens of flow " + std::to_string(f.src_rank) + "->" + std::to_string(f.dst_rank) +
                         " were not prepared on this rank");
  }

  DeviceBuffer upload(const std::vector<uint32_t>& words, const std::string& what) {
    DeviceBuffer buffer(std::max<size_t>(1, words.size()) * sizeof(uint32_t), what);
    uploader_.to_device(buffer.get(), words.data(), words.size() * sizeof(uint32_t), what);
    return buffer;
  }

  // This rank's sum: for each of its tokens, its row among each rank's returned tokens (ranks
  // with a combine flow to this one), the output, and a stream per flow.
  void prepare_combine(int rank, size_t flows) {
    const Routes& r = routes();
    std::vector<uint32_t> slots(r.tokens * uint64_t(r.ranks), kNoSlot);
    for (const Flow& f : spec().flows) {
      if (f.dst_rank != rank) continue;
      const std::vector<uint64_t> rows = slots_in_block(r.by_source.at(size_t(rank)), f.src_rank);
      for (uint64_t t = 0; t < r.tokens; ++t)
        if (rows[t] != kNotSent) slots[t * uint64_t(r.ranks) + uint64_t(f.src_rank)] = uint32_t(rows[t]);
    }
    slots_ = upload(slots, "the combine's token rows");
    out_ = DeviceBuffer(r.tokens * hidden(), "the combined tokens");
    combine_.slots = static_cast<const uint32_t*>(slots_.get());
    combine_.ranks = r.ranks;
    combine_.tokens = r.tokens;
    combine_.hidden_bytes = uint32_t(hidden());
    fork_ = make_untimed_event("the combine's fork");
    for (size_t i = 0; i < flows; ++i) {
      forks_.push_back(make_stream("a combine flow"));
      joins_.push_back(make_untimed_event("a combine flow's join"));
    }
  }

  Phase phase_;
  mutable std::optional<Routes> routes_;  // computed on first use, the same on every rank
  std::vector<std::pair<Flow, DeviceBuffer>> gathers_;  // dispatch: each flow's token indices
  CombineInputs combine_;
  DeviceBuffer slots_, out_;
  Event fork_;
  std::vector<Stream> forks_;
  std::vector<Event> joins_;
  BoundedCopier uploader_;
};

bool skew_value(uint64_t v) { return v <= 1000; }

SweptAxis skew_axis() {
  return {ShapeAxis::kRoutingSkew, {0}, skew_value, "routing_skew must be 0..1000 (a Zipf exponent of 0..10)",
          "expert popularity: 0 uniform, s > 0 Zipf of exponent s/100 (100: the i-th hottest expert is chosen in "
          "proportion to 1/i)"};
}

const char* const kBlocksHelp = "blocks (= SMs) of the sender per destination rank (the combine's sum runs on as many)";
const char* const kTokenHelp = "bytes per token (DeepSeek-V3's hidden size: 7168 bf16 = 14 KiB); bytes / chunk_bytes "
                               "= tokens per rank";

std::vector<SweptAxis> ldst_axes() {
  return {blocks_axis(24, kBlocksHelp), put_signal::warps_axis(),
          put_signal::chunk_axis(14336, kTokenHelp), put_signal::in_flight_axis(), skew_axis()};
}
std::vector<SweptAxis> tma_axes() {
  return {blocks_axis(24, kBlocksHelp), put_signal::warps_axis(), put_signal::tma_smem_axis(),
          put_signal::chunk_axis(14336, kTokenHelp), put_signal::in_flight_axis(), skew_axis()};
}

template <Sender kSender, Phase kPhase>
std::unique_ptr<TransferEngine> make(const CaseSpec& c) {
  return std::make_unique<TokensEngine>(kSender, kPhase, c);
}

}  // namespace

P2PBENCH_REGISTER_METHOD(kTokensDispatchLdst,
                         put_signal::put_signal_info("tokens_dispatch_ldst", "dispatch LD/ST", "#1b9e77", 15,
                                                     "expert-parallel dispatch: each token to the ranks of its top-8 "
                                                     "experts, a warp per token copying with 16-byte stores",
                                                     ldst_axes()),
                         (make<Sender::kLdst, Phase::kDispatch>));
P2PBENCH_REGISTER_METHOD(kTokensDispatchTma,
                         put_signal::put_signal_info("tokens_dispatch_tma", "dispatch TMA", "#d95f02", 16,
                                                     "expert-parallel dispatch: each token to the ranks of its top-8 "
                                                     "experts, a warp per token moving it with bulk copies (TMA)",
                                                     tma_axes()),
                         (make<Sender::kTma, Phase::kDispatch>));
P2PBENCH_REGISTER_METHOD(kTokensCombineLdst,
                         put_signal::put_signal_info("tokens_combine_ldst", "combine LD/ST", "#7570b3", 17,
                                                     "expert-parallel combine: tokens returned to their rank (LD/ST "
                                                     "warps) and their copies added in bf16",
                                                     ldst_axes()),
                         (make<Sender::kLdst, Phase::kCombine>));
P2PBENCH_REGISTER_METHOD(kTokensCombineTma,
                         put_signal::put_signal_info("tokens_combine_tma", "combine TMA", "#e7298a", 18,
                                                     "expert-parallel combine: tokens returned to their rank (TMA "
                                                     "bulk copies) and their copies added in bf16",
                                                     tma_axes()),
                         (make<Sender::kTma, Phase::kCombine>));

}  // namespace p2pbench::tokens
