// The collectives built from puts (collective_kernels.hpp): reduce-scatter by atomic adds into
// the owner (of f32 or bf16) or by two-shot staging, all-gather by stores, all-reduce two-shot or
// one-shot. Their figures sit beside NCCL's own collectives (nccl_reduce_scatter,
// nccl_all_gather, nccl_all_reduce) on the same ranks and sizes: configs/collectives.json.
#include <memory>
#include <stdexcept>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "engines/collective_engine.hpp"
#include "engines/engine_registry.hpp"
#include "methods/collectives/collective_kernels.hpp"

namespace p2pbench::collectives {
namespace {

// Longest a barrier waits for a peer before the sample is declared broken (as put_signal's).
constexpr double kBarrierTimeoutS = 15.0;

class PutCollectiveEngine final : public CollectiveEngine {
 public:
  PutCollectiveEngine(Algorithm a, const CaseSpec& c) : CollectiveEngine(c), algorithm_(a) {
    if (element() != element_of(a))
      throw std::logic_error(std::string(to_string(c.method)) + " is registered with elements other than its kernel's");
  }

  std::optional<std::string> unsupported_reason(int device) const override {
    if (auto why = CollectiveEngine::unsupported_reason(device)) return why;
    return collectives::unsupported_reason(algorithm_, blocks(), threads(), int(ranks().size()), smem_bytes(), device);
  }

  void prepare(int device, int rank, const std::vector<Flow>& mine) override {
    CollectiveEngine::prepare(device, rank, mine);
    if (smem_bytes()) prepare_tma(smem_bytes(), device);
  }

  // Also before the first launch (the case loop calls it before prepare()).
  void before_sample(const Endpoints& e, uint64_t source_seed, cudaStream_t stream) override {
    CollectiveEngine::before_sample(e, source_seed, stream);
    barriers_.reset(e, stream);
    if (!claim_pieces()) return;
    if (!queue_.get()) queue_ = DeviceBuffer(sizeof(PieceQueue), "the all-gather's piece queue");
    cuda_check(cudaMemsetAsync(queue_.get(), 0, sizeof(PieceQueue), stream), "zeroing the all-gather's piece queue");
  }

  // One operation: every flow of this rank (one each way with every other rank) at once.
  void launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) override {
    const Addresses a = addresses_of(transfers);
    Launch l;
    l.algorithm = algorithm_;
    l.ranks = int(ranks().size());
    l.me = me();
    l.size = size();
    for (int r = 0; r < l.ranks; ++r) {
      l.input[r] = static_cast<const float*>(a.base[r]);
      l.output[r] = static_cast<float*>(output_of(a.base[r]));
      l.staging[r] = static_cast<float*>(a.staging[r]);
      l.inbox[r] = static_cast<const float*>(a.inbox[r]);
      l.barrier_words[r] = static_cast<uint32_t*>(a.signal[r]);
    }
    barriers_.fill(l);
    l.tma_stage_bytes = smem_bytes() ? tma_stage_bytes(smem_bytes()) : 0;
    l.claim_pieces = uint32_t(claim_pieces());
    l.queue = static_cast<PieceQueue*>(queue_.get());
    collectives::launch(l, blocks(), threads(), stream);
  }

  // One-shot: each rank loads the whole vector from every peer.
  uint64_t bytes_moved(const Flow& f, uint64_t case_bytes) const override {
    if (algorithm_ == Algorithm::kAllReduceOneShot) return size().bytes;
    return CollectiveEngine::bytes_moved(f, case_bytes);
  }

  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return blocks(); }

  std::optional<std::string> stalled() override { return barriers_.stalled(ranks(), me(), "a word of its own"); }

 private:
  int blocks() const { return spec().blocks.value_or(1); }
  int threads() const { return spec().threads.value_or(512); }
  uint64_t smem_bytes() const { return spec().smem_bytes.value_or(0); }  // the TMA variants' stages
  uint64_t claim_pieces() const { return spec().claim_pieces.value_or(0); }  // the all-gathers'

  Algorithm algorithm_;
  RankBarriers barriers_{kBarrierTimeoutS};
  DeviceBuffer queue_;
};

// As every method's blocks: the kernel's own bound (kMaxBlocks) skips a case at run time, so that
// a --blocks range meant for the copy kernels does not refuse the whole sweep.
SweptAxis collective_blocks_axis() {
  return blocks_axis(32, "blocks of each rank's kernel; block b of every rank handles the same pieces of every chunk "
                         "(the all-gathers: unless they claim pieces, claim_pieces)");
}

std::vector<SweptAxis> ldst_axes() {
  return {collective_blocks_axis(), threads_axis(512, "threads per block (16 bytes each per access)")};
}

std::vector<SweptAxis> tma_axes() {
  return {collective_blocks_axis(), threads_axis(256, "threads per block: thread 0 issues the bulk copies, all of them sum"),
          {ShapeAxis::kSmemBytes, {65536}, nullptr, "",
           "shared memory per block: two stages, each a piece that one bulk load brings and bulk stores put (one block per SM)"}};
}

bool claim_in_range(uint64_t v) { return v <= 65536; }

// The all-gathers' claims (collective_kernels.hpp, Launch::claim_pieces): the default measured
// best on two H200 over 8..128 blocks (LD/ST pieces of 512 threads: 16 pieces, 128 KiB a claim;
// TMA: 4 stages of 32 KiB).
SweptAxis claim_axis(uint64_t default_pieces) {
  return {ShapeAxis::kClaimPieces, {default_pieces}, claim_in_range, "claim_pieces must be 0..65536",
          "pieces a block claims at a time from a counter of its rank's (0: block b takes pieces b, b + blocks, ... "
          "as the other collectives)"};
}

template <class... Axes>
std::vector<SweptAxis> with(std::vector<SweptAxis> axes, Axes... more) {
  (axes.push_back(more), ...);
  return axes;
}

MethodInfo info(const char* name, const char* title, const char* color, int order, Collective op, const char* help,
                std::vector<SweptAxis> swept, CollectiveElement element = CollectiveElement::kF32) {
  MethodInfo m = collective_method_info(name, title, color, order, op, help, std::move(swept));
  m.collective_element = element;
  return m;
}

template <Algorithm kAlgorithm>
std::unique_ptr<TransferEngine> make(const CaseSpec& c) {
  return std::make_unique<PutCollectiveEngine>(kAlgorithm, c);
}

}  // namespace

P2PBENCH_REGISTER_METHOD(kReduceScatterAdd,
                         info("reduce_scatter_add", "reduce-scatter: atomic-add puts", "tab:olive", 20,
                              Collective::kReduceScatter,
                              "reduce-scatter of f32: each rank adds its chunk r into rank r's output with 16-byte "
                              "reductions (red.add.v4.f32) through the peer mapping",
                              ldst_axes()),
                         make<Algorithm::kReduceScatterAdd>);
P2PBENCH_REGISTER_METHOD(kReduceScatterAddBf16,
                         info("reduce_scatter_add_bf16", "reduce-scatter: atomic-add puts, bf16", "tab:gray", 28,
                              Collective::kReduceScatter,
                              "reduce-scatter of bf16: each rank adds its chunk r into rank r's output with atomic "
                              "adds, 16-byte reductions of 8 bf16 (red.add.noftz.v4.bf16x2) through the peer mapping",
                              ldst_axes(), CollectiveElement::kBf16),
                         make<Algorithm::kReduceScatterAddBf16>);
P2PBENCH_REGISTER_METHOD(kReduceScatterTwoShot,
                         info("reduce_scatter_two_shot", "reduce-scatter: puts + local sum", "tab:cyan", 21,
                              Collective::kReduceScatter,
                              "reduce-scatter of f32: each rank stores its chunk r into rank r's staging slot, then "
                              "each sums its chunk in rank order",
                              ldst_axes()),
                         make<Algorithm::kReduceScatterTwoShot>);
// The all-gathers may be the transfer beside an interference workload, in the transfer's SM group
// where partitioned: the SM side of the copy engine's and NCCL's all-gather.
P2PBENCH_REGISTER_METHOD(kAllGatherPut,
                         beside_workload(info("all_gather_put", "all-gather: puts", "tab:purple", 22, Collective::kAllGather,
                              "all-gather of f32: each rank stores its chunk into every rank's output",
                              with(ldst_axes(), claim_axis(16)))),
                         make<Algorithm::kAllGather>);
P2PBENCH_REGISTER_METHOD(kAllReduceTwoShot,
                         info("all_reduce_two_shot", "all-reduce: two-shot puts", "tab:orange", 23,
                              Collective::kAllReduce,
                              "all-reduce of f32: the two-shot reduce-scatter, then each rank stores its summed chunk "
                              "into every rank's output",
                              ldst_axes()),
                         make<Algorithm::kAllReduceTwoShot>);
P2PBENCH_REGISTER_METHOD(kAllReduceOneShot,
                         info("all_reduce_one_shot", "all-reduce: one-shot loads", "tab:green", 24,
                              Collective::kAllReduce,
                              "all-reduce of f32: each rank loads the whole vector from every rank and sums it in "
                              "rank order (for small sizes)",
                              ldst_axes()),
                         make<Algorithm::kAllReduceOneShot>);
P2PBENCH_REGISTER_METHOD(kReduceScatterTwoShotTma,
                         info("reduce_scatter_two_shot_tma", "reduce-scatter: TMA puts + local sum", "tab:blue", 25,
                              Collective::kReduceScatter,
                              "reduce-scatter of f32: each rank's chunk r put into rank r's staging slot by bulk copies "
                              "(TMA) through shared memory, then each sums its chunk in rank order",
                              tma_axes()),
                         make<Algorithm::kReduceScatterTwoShot>);
P2PBENCH_REGISTER_METHOD(kAllGatherTma,
                         beside_workload(info("all_gather_tma", "all-gather: TMA puts", "tab:pink", 26, Collective::kAllGather,
                              "all-gather of f32: each piece of a rank's chunk loaded into shared memory once and bulk-"
                              "stored (TMA) into every rank's output",
                              with(tma_axes(), claim_axis(4)))),
                         make<Algorithm::kAllGather>);
P2PBENCH_REGISTER_METHOD(kAllReduceTwoShotTma,
                         info("all_reduce_two_shot_tma", "all-reduce: two-shot TMA", "tab:brown", 27,
                              Collective::kAllReduce,
                              "all-reduce of f32: the two-shot reduce-scatter with TMA puts, then each piece of the sum "
                              "written to shared memory and bulk-stored into every rank's output",
                              tma_axes()),
                         make<Algorithm::kAllReduceTwoShot>);

}  // namespace p2pbench::collectives
