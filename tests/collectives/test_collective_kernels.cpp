// The put-built collectives' kernel with every rank in one grid of one process (blockIdx.y = the
// rank; launch_in_one_grid), which compute-sanitizer can run too: each algorithm at 2, 3 and 4
// ranks, with LD/ST and (all-gather, two-shot) with TMA puts of 4 KiB stages, the atomic-add
// reduce-scatter also of bf16, launched three times (the barrier counts carry over), every rank's
// output checked against the reference of the operands (kernels/collective_data.hpp), the small
// sizes also against sums made on the host from the inputs read back; a changed element is
// found; a rank whose peer never comes gives up at its timeout and says where.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/collective_data.hpp"
#include "methods/collectives/collective_kernels.hpp"

namespace {

using namespace p2pbench;
using namespace p2pbench::collectives;

constexpr int kBlocks = 4, kThreads = 128;

Collective operation_of(Algorithm a) {
  switch (a) {
    case Algorithm::kReduceScatterAdd:
    case Algorithm::kReduceScatterAddBf16:
    case Algorithm::kReduceScatterTwoShot: return Collective::kReduceScatter;
    case Algorithm::kAllGather: return Collective::kAllGather;
    default: return Collective::kAllReduce;
  }
}

const char* name(Algorithm a) {
  switch (a) {
    case Algorithm::kReduceScatterAdd: return "reduce_scatter_add";
    case Algorithm::kReduceScatterAddBf16: return "reduce_scatter_add_bf16";
    case Algorithm::kReduceScatterTwoShot: return "reduce_scatter_two_shot";
    case Algorithm::kAllGather: return "all_gather";
    case Algorithm::kAllReduceTwoShot: return "all_reduce_two_shot";
    case Algorithm::kAllReduceOneShot: return "all_reduce_one_shot";
  }
  return "?";
}

template <class T>
T* device_alloc(size_t bytes) {
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, bytes), "allocating test memory");
  return static_cast<T*>(p);
}

// `count` elements of `element` at device address p, as doubles.
std::vector<double> read_elements(const void* p, uint64_t count, CollectiveElement element) {
  std::vector<unsigned char> bytes(count * element_bytes(element));
  cuda_check(cudaMemcpy(bytes.data(), p, bytes.size(), cudaMemcpyDeviceToHost), "reading elements back");
  std::vector<double> values(count);
  for (uint64_t k = 0; k < count; ++k) {
    uint32_t bits = 0;  // a bf16 is the high half of the f32 of the same value
    if (element == CollectiveElement::kBf16)
      bits = uint32_t(bytes[2 * k] | bytes[2 * k + 1] << 8) << 16;
    else
      std::memcpy(&bits, &bytes[4 * k], 4);
    float f;
    std::memcpy(&f, &bits, 4);
    values[k] = f;
  }
  return values;
}

// Every rank's memory on the one GPU, laid out as the engines lay it out.
class Ranks {
 public:
  Ranks(Algorithm a, int ranks, uint64_t bytes, uint32_t stage_bytes, uint32_t claim_pieces = 0)
      : a_(a), n_(ranks), op_(operation_of(a)), stage_bytes_(stage_bytes), claim_pieces_(claim_pieces) {
    size_ = *collective_size(op_, bytes, ranks, element_of(a));
    in_bytes_ = input_elements(op_, size_) * element_bytes(size_.element);
    out_offset_ = (in_bytes_ + 4095) / 4096 * 4096;
    chunk_bytes_ = size_.chunk_elements * element_bytes(size_.element);
    for (int r = 0; r < n_; ++r) {
      base_.push_back(device_alloc<char>(out_offset_ + output_bytes()));
      slots_.push_back(device_alloc<char>(chunk_bytes_ * size_t(n_)));  // slot s: from rank s
      words_.push_back(device_alloc<uint32_t>(kBarrierWordsBytes));
      counts_.push_back(device_alloc<uint32_t>(kMaxBlocks * 4));
      headers_.push_back(device_alloc<BarrierHeader>(sizeof(BarrierHeader)));
      queues_.push_back(device_alloc<PieceQueue>(sizeof(PieceQueue)));
      reset_barriers(words_[r], counts_[r], headers_[r], nullptr);
      cuda_check(cudaMemset(queues_[r], 0, sizeof(PieceQueue)), "zeroing a piece queue");
      fill_input(r);
    }
    poison_outputs();  // and waits for the set-up above
  }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;
  ~Ranks() {
    for (void* p : base_) cudaFree(p);
    for (void* p : slots_) cudaFree(p);
    for (void* p : words_) cudaFree(p);
    for (void* p : counts_) cudaFree(p);
    for (void* p : headers_) cudaFree(p);
    for (void* p : queues_) cudaFree(p);
  }

  static uint64_t seed(int r) { return 0x1234 + uint64_t(r) * 77; }
  float* output(int r) const { return reinterpret_cast<float*>(base_[size_t(r)] + out_offset_); }
  CollectiveElement element() const { return size_.element; }

  Launch launch_of(int me, uint64_t timeout_ns) const {
    Launch l;
    l.algorithm = a_;
    l.ranks = n_;
    l.me = me;
    l.size = size_;
    for (int r = 0; r < n_; ++r) {
      l.input[r] = reinterpret_cast<const float*>(base_[size_t(r)]);
      l.output[r] = output(r);
      l.staging[r] = reinterpret_cast<float*>(slots_[size_t(r)] + size_t(me) * chunk_bytes_);  // rank r's slot for me
      l.inbox[r] = reinterpret_cast<const float*>(slots_[size_t(me)] + size_t(r) * chunk_bytes_);  // my slot for rank r
      l.barrier_words[r] = words_[size_t(r)];
    }
    l.counts = counts_[size_t(me)];
    l.header = headers_[size_t(me)];
    l.timeout_ns = timeout_ns;
    l.tma_stage_bytes = stage_bytes_;
    l.claim_pieces = claim_pieces_;
    l.queue = queues_[size_t(me)];
    return l;
  }

  std::vector<Launch> all(uint64_t timeout_ns) const {
    std::vector<Launch> out;
    for (int r = 0; r < n_; ++r) out.push_back(launch_of(r, timeout_ns));
    return out;
  }

  // "" when rank r's output matches the reference, else what differs.
  std::string check(int r) const {
    kernels::CollectiveReference ref;
    ref.op = op_;
    ref.size = size_;
    ref.ranks = n_;
    ref.me = r;
    for (int k = 0; k < n_; ++k) ref.seeds[k] = seed(k);
    kernels::PatternCheck* result = nullptr;
    cuda_check(cudaMallocHost(&result, sizeof *result), "a check result");
    *result = {0, ~0ull};
    if (element() == CollectiveElement::kBf16)
      kernels::check_collective_output(reinterpret_cast<const __nv_bfloat16*>(output(r)), ref, result, nullptr);
    else
      kernels::check_collective_output(output(r), ref, result, nullptr);
    cuda_check(cudaDeviceSynchronize(), "checking an output");
    const std::string what = result->mismatches ? std::to_string(result->mismatches) + " bytes differ from " +
                                                      std::to_string(result->first_bad_offset)
                                                : "";
    cudaFreeHost(result);
    return what;
  }

  // Rank r's output against sums made here from every rank's input read back.
  void expect_host_sums(int r) const {
    std::vector<std::vector<double>> in;
    for (int k = 0; k < n_; ++k) in.push_back(read_elements(base_[size_t(k)], input_elements(op_, size_), element()));
    const std::vector<double> out = read_elements(output(r), output_elements(op_, size_), element());
    for (uint64_t e = 0; e < out.size(); ++e) {
      double want = 0;
      if (op_ == Collective::kAllGather) {
        want = in[e / size_.chunk_elements][e % size_.chunk_elements];
      } else {
        const uint64_t at = op_ == Collective::kReduceScatter ? uint64_t(r) * size_.chunk_elements + e : e;
        for (int k = 0; k < n_; ++k) want += in[size_t(k)][at];
      }
      ASSERT_EQ(out[e], want) << "rank " << r << " element " << e;
    }
  }

  // Every rank's output poisoned (before an operation that must write all of it), waited for.
  void poison_outputs() const {
    for (int r = 0; r < n_; ++r) kernels::poison_collective_output(output(r), output_bytes(), nullptr, size_.element);
    cuda_check(cudaDeviceSynchronize(), "poisoning the outputs");
  }

  PieceQueue queue(int r) const {
    PieceQueue q;
    cuda_check(cudaMemcpy(&q, queues_[size_t(r)], sizeof q, cudaMemcpyDeviceToHost), "reading a piece queue");
    return q;
  }

  BarrierHeader header(int r) const {
    BarrierHeader h;
    cuda_check(cudaMemcpy(&h, headers_[size_t(r)], sizeof h, cudaMemcpyDeviceToHost), "reading a header");
    return h;
  }

 private:
  uint64_t output_bytes() const { return output_elements(op_, size_) * element_bytes(element()); }

  void fill_input(int r) const {
    const uint64_t elements = input_elements(op_, size_);
    if (element() == CollectiveElement::kBf16)
      kernels::fill_collective_input(reinterpret_cast<__nv_bfloat16*>(base_[size_t(r)]), elements, seed(r), nullptr);
    else
      kernels::fill_collective_input(reinterpret_cast<float*>(base_[size_t(r)]), elements, seed(r), nullptr);
  }

  Algorithm a_;
  int n_;
  Collective op_;
  uint32_t stage_bytes_;
  uint32_t claim_pieces_;
  CollectiveSize size_;
  uint64_t in_bytes_ = 0, out_offset_ = 0, chunk_bytes_ = 0;
  std::vector<char*> base_;
  std::vector<char*> slots_;
  std::vector<uint32_t*> words_, counts_;
  std::vector<BarrierHeader*> headers_;
  std::vector<PieceQueue*> queues_;
};

constexpr uint64_t kTimeoutNs = 10'000'000'000ull;
constexpr uint64_t kTmaSmemBytes = 8192;  // two stages of 4 KiB

struct Variant {
  Algorithm algorithm;
  uint64_t smem_bytes;        // 0: LD/ST
  uint32_t claim_pieces = 0;  // the all-gather's claims (0: fixed pieces)
};

std::string name(const Variant& v) {
  return std::string(name(v.algorithm)) + (v.smem_bytes ? "_tma" : "") +
         (v.claim_pieces ? "_claim" + std::to_string(v.claim_pieces) : "");
}

class EveryAlgorithm : public ::testing::TestWithParam<Variant> {
 protected:
  // The variant's skip reason on this GPU for `ranks`, after allowing the TMA kernels their memory.
  std::optional<std::string> unsupported(int ranks) const {
    const Variant v = GetParam();
    if (auto why = unsupported_reason(v.algorithm, kBlocks, kThreads, ranks, v.smem_bytes, 0)) return why;
    if (v.smem_bytes) prepare_tma(v.smem_bytes, 0);
    return std::nullopt;
  }
  Ranks make(int ranks, uint64_t bytes) const {
    const Variant v = GetParam();
    return Ranks(v.algorithm, ranks, bytes, v.smem_bytes ? tma_stage_bytes(v.smem_bytes) : 0, v.claim_pieces);
  }
};

TEST_P(EveryAlgorithm, EveryRankHoldsTheReferenceAfterThreeOperations) {
  if (auto why = unsupported(4)) GTEST_SKIP() << *why;
  // 1000004 bytes: an all-reduce whose last chunk ends in a tail of fewer than 4 elements.
  for (int ranks : {2, 3, 4})
    for (uint64_t bytes : {uint64_t(64), uint64_t(4096), uint64_t(1000004), uint64_t(16) << 20}) {
      SCOPED_TRACE(name(GetParam()) + ", " + std::to_string(ranks) + " ranks, " + std::to_string(bytes) + " bytes");
      Ranks set = make(ranks, bytes);
      for (int i = 0; i < 3; ++i) {  // each operation writes every output (poisoned before it) again
        set.poison_outputs();
        launch_in_one_grid(set.all(kTimeoutNs), kBlocks, kThreads, nullptr);
        cuda_check(cudaDeviceSynchronize(), "running the collective");
      }
      for (int r = 0; r < ranks; ++r) {
        const PieceQueue q = set.queue(r);  // the last block out zeroed it (or nothing claimed)
        EXPECT_EQ(q.next, 0u) << "rank " << r;
        EXPECT_EQ(q.blocks_done, 0u) << "rank " << r;
        EXPECT_EQ(set.header(r).timed_out, 0u) << "rank " << r;
        EXPECT_EQ(set.check(r), "") << "rank " << r;
        if (bytes <= 4096) set.expect_host_sums(r);
      }
    }
}

TEST_P(EveryAlgorithm, TheCheckFindsAChangedElement) {
  if (auto why = unsupported(3)) GTEST_SKIP() << *why;
  Ranks set = make(3, 4096);
  launch_in_one_grid(set.all(kTimeoutNs), kBlocks, kThreads, nullptr);
  cuda_check(cudaDeviceSynchronize(), "running the collective");
  ASSERT_EQ(set.check(1), "");
  // 1000 as element 5: f32 0x447a0000, bf16 its high half.
  const uint32_t wrong = 0x447a0000u;
  const uint64_t bytes = element_bytes(set.element());
  const unsigned char* value = reinterpret_cast<const unsigned char*>(&wrong) + (4 - bytes);  // little-endian
  cuda_check(cudaMemcpy(reinterpret_cast<char*>(set.output(1)) + 5 * bytes, value, bytes, cudaMemcpyHostToDevice),
             "changing an element");
  EXPECT_EQ(set.check(1), std::to_string(bytes) + " bytes differ from " + std::to_string(5 * bytes));
}

TEST_P(EveryAlgorithm, ARankWhosePeerNeverComesGivesUp) {
  if (auto why = unsupported(2)) GTEST_SKIP() << *why;
  Ranks set = make(2, 4096);
  launch_in_one_grid({set.launch_of(1, 100'000'000)}, kBlocks, kThreads, nullptr);  // rank 0 never runs
  cuda_check(cudaDeviceSynchronize(), "running the lone rank");
  const BarrierHeader h = set.header(1);  // the lone rank's header (its launch's me is 1)
  EXPECT_EQ(h.timed_out, 1u);
  EXPECT_EQ(h.peer, 0u);
  EXPECT_LT(h.block, unsigned(kBlocks));
}

TEST(CollectiveLimits, TmaOnlyWhereAnAlgorithmPutsAndStagesFit) {
  EXPECT_TRUE(unsupported_reason(Algorithm::kAllReduceOneShot, 4, 128, 2, kTmaSmemBytes, 0).has_value());
  EXPECT_TRUE(unsupported_reason(Algorithm::kAllGather, 4, 128, 2, 16, 0).has_value());  // stages of 8 bytes
  EXPECT_TRUE(unsupported_reason(Algorithm::kAllGather, 4, 16, 2, 0, 0).has_value());    // not whole warps
  EXPECT_TRUE(unsupported_reason(Algorithm::kAllGather, kMaxBlocks + 1, 128, 2, 0, 0).has_value());
  EXPECT_EQ(tma_stage_bytes(100), 48u);  // two stages of whole 16 bytes
  EXPECT_TRUE(unsupported_reason(Algorithm::kReduceScatterAddBf16, 4, 128, 2, kTmaSmemBytes, 0).has_value());
}

TEST(CollectiveLimits, OnlyTheAllGatherClaimsPiecesAndOnlyWithAQueue) {
  Launch l;
  l.algorithm = Algorithm::kAllReduceOneShot;
  l.ranks = 2;
  l.size = *collective_size(Collective::kAllReduce, 4096, 2);
  l.claim_pieces = 4;
  PieceQueue queue;  // refused before any launch: never reached by a kernel
  l.queue = &queue;
  EXPECT_THROW(launch_in_one_grid({l}, kBlocks, kThreads, nullptr), RuntimeFailure);
  l.algorithm = Algorithm::kAllGather;
  l.size = *collective_size(Collective::kAllGather, 4096, 2);
  l.queue = nullptr;
  EXPECT_THROW(launch_in_one_grid({l}, kBlocks, kThreads, nullptr), RuntimeFailure);
}

TEST(CollectiveLimits, ALaunchWhoseElementsAreNotItsAlgorithmsIsRefused) {
  EXPECT_EQ(element_of(Algorithm::kReduceScatterAddBf16), CollectiveElement::kBf16);
  EXPECT_EQ(element_of(Algorithm::kReduceScatterAdd), CollectiveElement::kF32);
  Launch l;
  l.algorithm = Algorithm::kReduceScatterAddBf16;
  l.ranks = 2;
  l.size = *collective_size(Collective::kReduceScatter, 4096, 2);  // f32
  EXPECT_THROW(launch_in_one_grid({l}, kBlocks, kThreads, nullptr), RuntimeFailure);
}

INSTANTIATE_TEST_SUITE_P(Collectives, EveryAlgorithm,
                         ::testing::Values(Variant{Algorithm::kReduceScatterAdd, 0},
                                           Variant{Algorithm::kReduceScatterAddBf16, 0},
                                           Variant{Algorithm::kReduceScatterTwoShot, 0},
                                           Variant{Algorithm::kAllGather, 0}, Variant{Algorithm::kAllReduceTwoShot, 0},
                                           Variant{Algorithm::kAllReduceOneShot, 0},
                                           Variant{Algorithm::kReduceScatterTwoShot, kTmaSmemBytes},
                                           Variant{Algorithm::kAllGather, kTmaSmemBytes},
                                           Variant{Algorithm::kAllReduceTwoShot, kTmaSmemBytes},
                                           // claims of 1 piece: more claims than blocks at every size
                                           Variant{Algorithm::kAllGather, 0, 1}, Variant{Algorithm::kAllGather, 0, 16},
                                           Variant{Algorithm::kAllGather, kTmaSmemBytes, 1},
                                           Variant{Algorithm::kAllGather, kTmaSmemBytes, 4}),
                         [](const auto& info) { return name(info.param); });

}  // namespace
