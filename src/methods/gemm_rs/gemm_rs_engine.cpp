// The GEMM -> reduce-scatter pipeline (tile_schedule.hpp): each rank's GEMM in column tiles, one
// cuBLASLt call each, every tile's completion published by a flag (mark_tile_done), and the
// reduce-scatter of the tiles by atomic-add puts into their owners (gemm_rs_kernels.hpp). Five
// methods time its parts in the same run, all with the same operands, tiles and SMs:
//   gemm_rs_fused       the reduce-scatter kernel (blocks SMs) on a stream of its own, started once
//                       the first tile is done, each tile sent as soon as its flag says so, while
//                       later tiles compute
//   gemm_rs_sequential  the tiles, then the reduce-scatter (one stream)
//   gemm_rs_beside      the tiles beside a reduce-scatter that does not wait for them (today's
//                       interference: the same traffic, unrelated to the GEMM's progress)
//   gemm_rs_gemm_only   the tiles alone
//   gemm_rs_rs_only     the reduce-scatter alone
//   gemm_rs_fused_green the fused pipeline with the SMs split by CUDA green contexts: the
//                       reduce-scatter in a group of `blocks` SMs (Hopper: a multiple of 8), the
//                       tiles in the rest, both started at once (they cannot take each other's SMs)
// Overlap efficiency = (T_sequential - T_fused) / min(T_gemm_only, T_rs_only), from the rows'
// time_us (the report). Without a partition, the fused and beside GEMMs ask cuBLASLt for the SMs
// the reduce-scatter leaves (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET), which nothing enforces.
#include <algorithm>
#include <cmath>
#include <memory>

#include "common/bounded_copier.hpp"
#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"
#include "device/green_context.hpp"
#include "engines/collective_engine.hpp"
#include "engines/engine_registry.hpp"
#include "methods/collectives/collective_kernels.hpp"
#include "methods/gemm_rs/gemm_rs_kernels.hpp"
#include "methods/gemm_rs/gemm_rs_row_fields.hpp"
#include "methods/gemm_rs/tile_gemm.hpp"

namespace p2pbench::gemm_rs {
namespace {

enum class Variant { kFused, kSequential, kBeside, kGemmOnly, kRsOnly, kFusedGreen };

constexpr double kWaitTimeoutS = 15.0;  // a barrier's or a tile flag's, as the collectives'
constexpr int kSampledElements = 32;    // of the output, per sample, against the host reference

class GemmRsEngine final : public CollectiveEngine {
 public:
  GemmRsEngine(Variant v, const CaseSpec& c) : CollectiveEngine(c), variant_(v) {
    schedule_ = tile_schedule(c.bytes, c.gemm_k.value_or(0), c.tiles.value_or(0), int(ranks().size()), why_);
  }

  std::optional<std::string> unsupported_reason(int device) const override {
    if (auto why = CollectiveEngine::unsupported_reason(device)) return why;
    if (!schedule_) return why_;
    if (auto why = collectives::unsupported_reason(collectives::Algorithm::kReduceScatterAdd, blocks(), threads(),
                                                   int(ranks().size()), 0, device))
      return why;
    return variant_ == Variant::kFusedGreen ? green_partition_reason(device) : std::nullopt;
  }

  void prepare(int device, int rank, const std::vector<Flow>& mine) override {
    CollectiveEngine::prepare(device, rank, mine);
    if (gemm_) return;
    const int sms = sm_count(device);
    const bool beside_the_rs = variant_ == Variant::kFused || variant_ == Variant::kBeside;
    const int sm_target = partition_ ? partition_->split().workload_sms : beside_the_rs ? std::max(1, sms - blocks()) : 0;
    Stream stream = make_stream("the pipeline's set-up");
    gemm_ = std::make_unique<TileGemm>(*schedule_, rank, sm_target, stream.get());
    for (uint64_t t = 0; t < schedule_->tiles; ++t) gemm_->enqueue_tile(t, stream.get());  // D for the *_only and beside
    wait_for_stream(stream.get(), kLocalWorkWaitS, "the pipeline's first D");
    comm_ = make_stream("the pipeline's reduce-scatter");
    fork_ = make_untimed_event("the pipeline's fork");
    join_ = make_untimed_event("the pipeline's join");
  }

  // Also before the first launch (the case loop calls it before prepare()).
  void before_sample(const Endpoints& e, uint64_t source_seed, cudaStream_t stream) override {
    CollectiveEngine::before_sample(e, source_seed, stream);
    barriers_.reset(e, stream);
    if (!ready_.get()) ready_ = DeviceBuffer(schedule_->tiles * sizeof(uint32_t), "the pipeline's tile flags");
    cuda_check(cudaMemsetAsync(ready_.get(), 0, ready_.size(), stream), "zeroing the pipeline's tile flags");
  }

  void fill_source(void*, size_t, uint64_t, cudaStream_t) override {}  // the operands are the GEMM's own

  void poison_destination(void* region, size_t, uint64_t, cudaStream_t stream) override {
    if (!first_poison_of_sample()) return;
    kernels::poison_collective_output(region, schedule_->m * schedule_->n * 4, stream);
    if (variant_ == Variant::kGemmOnly && gemm_)  // the check then reads D itself
      cuda_check(cudaMemsetAsync(gemm_->d(), 0xFF, schedule_->m * schedule_->n * 4, stream), "poisoning the pipeline's D");
  }

  void launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) override;

  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override {
    if (variant_ == Variant::kGemmOnly) return std::nullopt;
    return blocks();
  }

  std::optional<std::string> stalled() override { return barriers_.stalled(ranks(), me(), "a tile's GEMM"); }
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;

 private:
  int blocks() const { return spec().blocks.value_or(16); }
  int threads() const { return spec().threads.value_or(512); }
  TileReduce reduce_of(const std::vector<Transfer>& transfers, bool wait) const;
  // Tiles [first, end) of the GEMM, each followed by its flag.
  void enqueue_gemm(cudaStream_t stream, uint64_t first = 0, uint64_t end = ~0ull) const {
    for (uint64_t t = first; t < std::min(end, schedule_->tiles); ++t) {
      gemm_->enqueue_tile(t, stream);
      mark_tile_done(static_cast<uint32_t*>(ready_.get()) + t, stream);
    }
  }

  // The only test of a split is making it (under MPS it is refused), so the partition made here
  // is the one the case then uses.
  std::optional<std::string> green_partition_reason(int device) const {
    std::string why_not;
    if (!partition_) partition_ = GreenPartition::create(device, blocks(), why_not);
    if (!partition_) return why_not;
    return std::nullopt;
  }
  void launch_green(const std::vector<Transfer>& transfers, cudaStream_t stream);

  Variant variant_;
  mutable std::unique_ptr<GreenPartition> partition_;  // gemm_rs_fused_green's SM groups
  std::optional<TileSchedule> schedule_;
  std::string why_;
  std::unique_ptr<TileGemm> gemm_;
  RankBarriers barriers_{kWaitTimeoutS};
  DeviceBuffer ready_;  // the tile flags
  Stream comm_;
  Event fork_, join_;
  BoundedCopier element_reader_;
};

TileReduce GemmRsEngine::reduce_of(const std::vector<Transfer>& transfers, bool wait) const {
  const Addresses a = addresses_of(transfers);
  TileReduce r;
  r.ranks = int(ranks().size());
  r.me = me();
  r.tiles = schedule_->tiles;
  r.tile_elements = schedule_->tile_elements();
  r.partial = gemm_->d();
  for (int i = 0; i < r.ranks; ++i) {
    r.output[i] = static_cast<float*>(output_of(a.base[i]));
    r.barrier_words[i] = static_cast<uint32_t*>(a.signal[i]);
  }
  r.ready = static_cast<const uint32_t*>(ready_.get());
  r.wait_for_tiles = wait;
  barriers_.fill(r);
  return r;
}

void GemmRsEngine::launch_fused(const std::vector<Transfer>& transfers, cudaStream_t stream) {
  if (!gemm_) throw RuntimeFailure("the pipeline was launched before prepare()");
  switch (variant_) {
    case Variant::kGemmOnly: return enqueue_gemm(stream);
    case Variant::kRsOnly: return reduce_tiles(reduce_of(transfers, false), blocks(), threads(), stream);
    case Variant::kSequential:
      enqueue_gemm(stream);
      return reduce_tiles(reduce_of(transfers, true), blocks(), threads(), stream);
    case Variant::kFused:
    case Variant::kBeside:
      // The reduce-scatter forks off the case's stream once the first tile is done (so the first
      // tile, with all the SMs, never waits for SMs its spinning blocks hold) and joins it at the
      // end: graph capture keeps both streams.
      enqueue_gemm(stream, 0, 1);
      cuda_check(cudaEventRecord(fork_.get(), stream), "forking the pipeline's reduce-scatter");
      cuda_check(cudaStreamWaitEvent(comm_.get(), fork_.get(), 0), "forking the pipeline's reduce-scatter");
      reduce_tiles(reduce_of(transfers, variant_ == Variant::kFused), blocks(), threads(), comm_.get());
      enqueue_gemm(stream, 1, schedule_->tiles);
      cuda_check(cudaEventRecord(join_.get(), comm_.get()), "joining the pipeline's reduce-scatter");
      cuda_check(cudaStreamWaitEvent(stream, join_.get(), 0), "joining the pipeline's reduce-scatter");
      return;
    case Variant::kFusedGreen: return launch_green(transfers, stream);
  }
}

// Both start at once: the tiles cannot take the reduce-scatter's SMs, nor its blocks theirs.
void GemmRsEngine::launch_green(const std::vector<Transfer>& transfers, cudaStream_t stream) {
  if (!partition_) throw RuntimeFailure("gemm_rs_fused_green was launched without its SM partition");
  partition_->fork_from(stream);
  reduce_tiles(reduce_of(transfers, true), blocks(), threads(), partition_->transfer_stream());
  enqueue_gemm(partition_->workload_stream());
  partition_->join_into(stream);
}

// Sampled elements of this rank's tiles of the output (the GEMM alone: of its own D) against the
// float64 sum of every rank's A B, within fp32 accumulation's bound.
std::optional<std::string> GemmRsEngine::verify(const void* dst, size_t, uint64_t, uint64_t, cudaStream_t stream) {
  if (!first_check_of_sample()) return std::nullopt;
  wait_for_stream(stream, kLocalWorkWaitS, "the pipeline before its check");
  const TileSchedule& s = *schedule_;
  const bool own_d = variant_ == Variant::kGemmOnly;
  const float* out = own_d ? gemm_->d() : static_cast<const float*>(dst);
  std::vector<uint64_t> tiles = own_d ? std::vector<uint64_t>{0, s.tiles - 1} : s.owned_by(me());
  if (tiles.empty()) return std::nullopt;
  const int per_tile = std::max(1, kSampledElements / int(tiles.size()));
  for (uint64_t t : tiles)
    for (int n = 0; n < per_tile; ++n) {
      const uint64_t e = (uint64_t(n) * 2654435761ull + t * 977ull + 13) % s.tile_elements();
      const uint64_t i = e % s.m, j = t * s.columns() + e / s.m;
      const float got = element_reader_.read(out + s.first_element(t) + e, "an element of the pipeline's result");
      double want = 0, bound = 0;
      for (size_t r = 0; r < ranks().size(); ++r) {
        if (own_d && int(r) != me()) continue;
        double b = 0;
        want += TileGemm::reference(s, ranks()[r], i, j, b);
        bound += b;
      }
      bound += std::fabs(want) * double(ranks().size()) / (1 << 24);  // the f32 adds of the ranks' tiles
      if (!(std::fabs(double(got) - want) <= bound + 1e-6))
        return "D(" + std::to_string(i) + ", " + std::to_string(j) + ") of tile " + std::to_string(t) + " = " +
               std::to_string(got) + ", the float64 reference is " + std::to_string(want) + " (bound " +
               std::to_string(bound) + ")";
    }
  return std::nullopt;
}

bool tile_count(uint64_t v) { return v >= 1 && v <= 4096; }
bool inner_dimension(uint64_t v) { return v >= 16 && v <= 65536 && v % 16 == 0; }
std::vector<SweptAxis> axes() {
  return {blocks_axis(16, "blocks (SMs) of the reduce-scatter kernel; the GEMM beside it targets the other SMs"),
          threads_axis(512, "threads per block of the reduce-scatter kernel"),
          {ShapeAxis::kTiles, {8}, tile_count, "tiles must be 1..4096", "column tiles of the GEMM, each a cuBLASLt call "
           "and a flag, reduce-scattered as it is done (bytes = the f32 D of m x m: m / tiles columns a tile)"},
          {ShapeAxis::kGemmK, {4096}, inner_dimension, "gemm_k must be a multiple of 16 from 16 to 65536",
           "the GEMM's inner dimension K (bf16 operands, f32 D)"}};
}

// The pipeline's rows are reduce-scatter rows (collective) with their GEMM's figures beside.
MethodInfo info(const char* name, const char* title, const char* color, int order, const char* help) {
  MethodInfo m = collective_method_info(name, title, color, order, Collective::kReduceScatter, help, axes());
  m.row_fields = {gemm_rs_row_field()};
  return m;
}

template <Variant kVariant>
std::unique_ptr<TransferEngine> make(const CaseSpec& c) {
  return std::make_unique<GemmRsEngine>(kVariant, c);
}

}  // namespace

P2PBENCH_REGISTER_METHOD(kGemmRsFused,
                         info("gemm_rs_fused", "GEMM → RS fused", "tab:red", 40,
                              "bf16 GEMM in column tiles, each tile reduce-scattered (f32 atomic-add puts) as soon as "
                              "its flag says it is done, while later tiles compute"),
                         make<Variant::kFused>);
P2PBENCH_REGISTER_METHOD(kGemmRsSequential,
                         info("gemm_rs_sequential", "GEMM then RS", "tab:blue", 41,
                              "the same GEMM tiles, then the same reduce-scatter, one after the other"),
                         make<Variant::kSequential>);
P2PBENCH_REGISTER_METHOD(kGemmRsBeside,
                         info("gemm_rs_beside", "GEMM beside RS", "tab:purple", 42,
                              "the same GEMM tiles beside a reduce-scatter that does not wait for them (the "
                              "interference of unrelated traffic)"),
                         make<Variant::kBeside>);
P2PBENCH_REGISTER_METHOD(kGemmRsGemmOnly,
                         info("gemm_rs_gemm_only", "GEMM tiles alone", "tab:gray", 43,
                              "the pipeline's GEMM tiles alone (the time overlap efficiency compares with)"),
                         make<Variant::kGemmOnly>);
P2PBENCH_REGISTER_METHOD(kGemmRsFusedGreen,
                         info("gemm_rs_fused_green", "GEMM → RS fused, green SM groups", "tab:brown", 45,
                              "the fused pipeline with the SMs split by CUDA green contexts: the reduce-scatter in a "
                              "group of `blocks` SMs (Hopper: rounded up to a multiple of 8), the tiles in the rest; "
                              "a GPU per rank, no MPS"),
                         make<Variant::kFusedGreen>);
P2PBENCH_REGISTER_METHOD(kGemmRsRsOnly,
                         info("gemm_rs_rs_only", "RS of the tiles alone", "tab:olive", 44,
                              "the pipeline's reduce-scatter of the tiles alone, on its blocks"),
                         make<Variant::kRsOnly>);

}  // namespace p2pbench::gemm_rs
