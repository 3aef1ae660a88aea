// The GEMM -> reduce-scatter pipeline's reduce-scatter kernel with every rank in one grid of one
// process (blockIdx.y = the rank; reduce_tiles_in_one_grid), which compute-sanitizer can run too:
// CUDA 13.0's runs the kernels of two streams at once, so the cases that need that run under it too.
// Each rank's D is a set of exact small integers, so every owned tile of the output must equal
// the sum of the ranks' tiles exactly. Checked: three operations in a row (flags and barrier
// counts carry over); a tile written only just before its flag is raised, by a kernel on
// another stream while the reduce-scatter waits (it must not read the tile earlier); the same
// in green-context SM groups inside one captured graph, as gemm_rs_fused_green runs it; and a
// flag that is never raised makes the wait give up at its timeout and say it waited for a tile.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "device/green_context.hpp"
#include "methods/gemm_rs/gemm_rs_kernels.hpp"

namespace {

using namespace p2pbench;
using namespace p2pbench::gemm_rs;

constexpr int kBlocks = 4, kThreads = 128;
constexpr uint64_t kTimeoutNs = 10'000'000'000ull;
constexpr float kPoison = -1e30f;

// D_r(e) of tile t: an integer from -8 to 8, different for each rank, tile and element.
float partial_value(int rank, uint64_t t, uint64_t e) { return float(int((e * 7 + t * 13 + uint64_t(rank) * 5) % 17) - 8); }

template <class T>
T* device_alloc(size_t bytes) {
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, bytes), "allocating test memory");
  cuda_check(cudaMemset(p, 0, bytes), "zeroing test memory");
  return static_cast<T*>(p);
}

// Every rank's memory on the one GPU: D (partial), the output, the tile flags and the barriers.
class Ranks {
 public:
  Ranks(int ranks, uint64_t tiles, uint64_t tile_elements) : n_(ranks), tiles_(tiles), tile_elements_(tile_elements) {
    for (int r = 0; r < n_; ++r) {
      partial_.push_back(device_alloc<float>(elements() * 4));
      output_.push_back(device_alloc<float>(elements() * 4));
      ready_.push_back(device_alloc<uint32_t>(tiles_ * 4));
      words_.push_back(device_alloc<uint32_t>(kernels::kBarrierWordsBytes));
      counts_.push_back(device_alloc<uint32_t>(kernels::kMaxBarrierBlocks * 4));
      headers_.push_back(device_alloc<kernels::BarrierHeader>(sizeof(kernels::BarrierHeader)));
      fill_output(r, kPoison);
    }
    // The zeroing and the poison are queued on the legacy stream (a copy from pageable memory may
    // return before it lands), which the cases' non-blocking streams do not wait for.
    cuda_check(cudaDeviceSynchronize(), "setting up the ranks' memory");
  }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;
  ~Ranks() {
    for (auto* list : {&partial_, &output_})
      for (float* p : *list) cudaFree(p);
    for (auto* list : {&ready_, &words_, &counts_})
      for (uint32_t* p : *list) cudaFree(p);
    for (kernels::BarrierHeader* p : headers_) cudaFree(p);
  }

  uint64_t elements() const { return tiles_ * tile_elements_; }
  int ranks() const { return n_; }
  uint64_t tiles() const { return tiles_; }

  // Tile t of rank r's D, on `stream` (an asynchronous copy: it may run while the reduce-scatter waits).
  void write_tile(int r, uint64_t t, cudaStream_t stream) {
    auto& host = staged_.emplace_back(std::make_unique<std::vector<float>>(tile_elements_));
    for (uint64_t e = 0; e < tile_elements_; ++e) (*host)[e] = partial_value(r, t, e);
    cuda_check(cudaMemcpyAsync(partial_[size_t(r)] + t * tile_elements_, host->data(), tile_elements_ * 4,
                               cudaMemcpyHostToDevice, stream),
               "writing a tile of D");
  }
  void write_all_tiles(cudaStream_t stream) {
    for (int r = 0; r < n_; ++r)
      for (uint64_t t = 0; t < tiles_; ++t) write_tile(r, t, stream);
  }
  uint32_t* flag(int r, uint64_t t) const { return ready_[size_t(r)] + t; }

  std::vector<TileReduce> launches(uint64_t timeout_ns) const {
    std::vector<TileReduce> out;
    for (int me = 0; me < n_; ++me) {
      TileReduce l;
      l.ranks = n_;
      l.me = me;
      l.tiles = tiles_;
      l.tile_elements = tile_elements_;
      l.partial = partial_[size_t(me)];
      for (int r = 0; r < n_; ++r) {
        l.output[r] = output_[size_t(r)];
        l.barrier_words[r] = words_[size_t(r)];
      }
      l.ready = ready_[size_t(me)];
      l.counts = counts_[size_t(me)];
      l.header = headers_[size_t(me)];
      l.timeout_ns = timeout_ns;
      out.push_back(l);
    }
    return out;
  }

  // Every tile rank r owns equals the ranks' tiles summed, exactly: "" or what differs.
  std::string check(int r) const {
    std::vector<float> out(elements());
    cuda_check(cudaMemcpy(out.data(), output_[size_t(r)], elements() * 4, cudaMemcpyDeviceToHost), "reading an output");
    for (uint64_t t = uint64_t(r); t < tiles_; t += uint64_t(n_))
      for (uint64_t e = 0; e < tile_elements_; ++e) {
        float want = 0;
        for (int k = 0; k < n_; ++k) want += partial_value(k, t, e);
        if (out[t * tile_elements_ + e] != want)
          return "rank " + std::to_string(r) + " tile " + std::to_string(t) + " element " + std::to_string(e) + " = " +
                 std::to_string(out[t * tile_elements_ + e]) + ", want " + std::to_string(want);
      }
    return "";
  }

  kernels::BarrierHeader header(int r) const {
    kernels::BarrierHeader h;
    cuda_check(cudaMemcpy(&h, headers_[size_t(r)], sizeof h, cudaMemcpyDeviceToHost), "reading a header");
    return h;
  }

 private:
  void fill_output(int r, float value) {
    std::vector<float> v(elements(), value);
    cuda_check(cudaMemcpy(output_[size_t(r)], v.data(), v.size() * 4, cudaMemcpyHostToDevice), "poisoning an output");
  }

  int n_;
  uint64_t tiles_, tile_elements_;
  std::vector<float*> partial_, output_;
  std::vector<uint32_t*> ready_, words_, counts_;
  std::vector<kernels::BarrierHeader*> headers_;
  std::vector<std::unique_ptr<std::vector<float>>> staged_;  // host copies of tiles in flight
};

void expect_every_owner_holds_the_sum(const Ranks& set) {
  for (int r = 0; r < set.ranks(); ++r) {
    EXPECT_EQ(set.check(r), "");
    EXPECT_EQ(set.header(r).timed_out, 0u) << "rank " << r;
  }
}

TEST(TileReduce, EveryOwnerHoldsTheSumAfterThreeOperations) {
  for (int ranks : {2, 3, 4})
    for (uint64_t tiles : {uint64_t(1), uint64_t(5), uint64_t(8)}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, " + std::to_string(tiles) + " tiles");
      Ranks set(ranks, tiles, 4096 + 16);  // not a whole number of the blocks' pieces
      set.write_all_tiles(nullptr);
      for (int op = 0; op < 3; ++op) {  // the n-th operation waits for flag value n
        for (int r = 0; r < ranks; ++r)
          for (uint64_t t = 0; t < tiles; ++t) mark_tile_done(set.flag(r, t), nullptr);
        reduce_tiles_in_one_grid(set.launches(kTimeoutNs), kBlocks, kThreads, nullptr);
      }
      cuda_check(cudaDeviceSynchronize(), "running the reduce-scatter");
      expect_every_owner_holds_the_sum(set);
    }
}

// Each tile is written, then flagged, on a second stream after the reduce-scatter started: a
// tile read before its flag would add the zeros D held before.
void write_and_flag_while_it_waits(Ranks& set, cudaStream_t reduce, cudaStream_t tiles) {
  reduce_tiles_in_one_grid(set.launches(kTimeoutNs), kBlocks, kThreads, reduce);
  for (uint64_t t = 0; t < set.tiles(); ++t)
    for (int r = 0; r < set.ranks(); ++r) {
      set.write_tile(r, t, tiles);
      mark_tile_done(set.flag(r, t), tiles);
    }
}

TEST(TileReduce, ATileIsReadOnlyAfterItsFlag) {
  cudaStream_t reduce = nullptr, tiles = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&reduce, cudaStreamNonBlocking), "a stream");
  cuda_check(cudaStreamCreateWithFlags(&tiles, cudaStreamNonBlocking), "a stream");
  Ranks set(3, 6, 1 << 16);
  write_and_flag_while_it_waits(set, reduce, tiles);
  cuda_check(cudaDeviceSynchronize(), "running the reduce-scatter");
  expect_every_owner_holds_the_sum(set);
  cudaStreamDestroy(reduce);
  cudaStreamDestroy(tiles);
}

// gemm_rs_fused_green's shape: forked from one stream into the two SM groups' streams and joined
// back, captured into a graph, then replayed.
TEST(TileReduce, RunsInGreenGroupsInsideACapturedGraph) {
  std::string why_not;
  auto partition = GreenPartition::create(0, 16, why_not);
  if (!partition) GTEST_SKIP() << why_not;
  cudaStream_t origin = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking), "a stream");
  Ranks set(2, 4, 1 << 16);
  cuda_check(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal), "starting a capture");
  partition->fork_from(origin);
  write_and_flag_while_it_waits(set, partition->transfer_stream(), partition->workload_stream());
  partition->join_into(origin);
  cudaGraph_t graph = nullptr;
  cuda_check(cudaStreamEndCapture(origin, &graph), "ending the capture");
  cudaGraphExec_t exec = nullptr;
  cuda_check(cudaGraphInstantiate(&exec, graph, 0), "instantiating the graph");
  cuda_check(cudaGraphLaunch(exec, origin), "launching the graph");
  cuda_check(cudaStreamSynchronize(origin), "running the graph");
  expect_every_owner_holds_the_sum(set);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(origin);
}

TEST(TileReduce, AFlagNeverRaisedGivesUpAtTheTimeout) {
  Ranks set(2, 3, 4096);
  set.write_all_tiles(nullptr);
  mark_tile_done(set.flag(0, 0), nullptr);  // rank 0's first tile only
  reduce_tiles_in_one_grid(set.launches(200'000'000ull), kBlocks, kThreads, nullptr);
  cuda_check(cudaDeviceSynchronize(), "running the reduce-scatter");
  const kernels::BarrierHeader h = set.header(0);
  EXPECT_EQ(h.timed_out, 1u);
  EXPECT_EQ(h.peer, kernels::kNoPeer);  // it waited for a tile, not for a peer
  EXPECT_EQ(h.count, 1u);               // the first operation
  EXPECT_EQ(set.header(1).timed_out, 1u);
}

}  // namespace
