// Both baselines moving real bytes for more than two ranks. The ranks are threads of this
// process (ThreadPeerGroup), each on GPU rank mod the GPUs visible. Every destination is checked
// byte for byte against its sender's pattern, after plain launches and after a CUDA graph
// replays captured ones (as the runner does).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <mutex>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "engines/baseline_resources.hpp"
#include "engines/nccl_engine.hpp"
#include "engines/shared_host_memory.hpp"
#include "engines/staged_engine.hpp"
#include "kernels/pattern_kernels.hpp"
#include "thread_peer_group.hpp"

namespace p2pbench {
namespace {

constexpr uint64_t kSeed = 0x5eed;
uint64_t seed_of(int rank) { return kSeed + uint64_t(rank); }

int gpu_count() {
  int n = 0;
  cuda_check(cudaGetDeviceCount(&n), "counting GPUs");
  return n;
}

std::vector<Flow> flows_of_rank(const std::vector<Flow>& flows, int rank) {
  std::vector<Flow> mine;
  for (const Flow& f : flows)
    if (f.src_rank == rank || f.dst_rank == rank) mine.push_back(f);
  return mine;
}

// One rank's buffers: its source (its pattern) and one destination slot per possible sender.
struct RankBuffers {
  RankBuffers(int rank, int ranks, size_t bytes, cudaStream_t stream) : src(bytes, "a test source") {
    kernels::fill_pattern(src.get(), bytes, seed_of(rank), 0, stream);
    for (int s = 0; s < ranks; ++s) {
      dst.emplace_back(bytes, "a test destination");
      kernels::fill_poison(dst.back().get(), bytes, seed_of(s), 0, stream);
    }
    cuda_check(cudaStreamSynchronize(stream), "filling the test buffers");
  }
  std::vector<Transfer> transfers(const std::vector<Flow>& mine, size_t bytes) {
    std::vector<Transfer> out;
    for (const Flow& f : mine) out.push_back({src.get(), dst[size_t(f.src_rank)].get(), bytes, f});
    return out;
  }
  DeviceBuffer src;
  std::vector<DeviceBuffer> dst;
};

// Enqueues `launch` once uncaptured, then captures it twice into a graph and replays it.
void launch_plain_then_graph(cudaStream_t stream, const std::function<void(cudaStream_t)>& launch) {
  launch(stream);
  cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "beginning a capture");
  launch(stream);
  launch(stream);
  cudaGraph_t raw = nullptr;
  cuda_check(cudaStreamEndCapture(stream, &raw), "ending a capture");
  Graph graph(raw);
  cudaGraphExec_t exec_raw = nullptr;
  cuda_check(cudaGraphInstantiate(&exec_raw, graph.get(), 0), "instantiating the graph");
  GraphExec exec(exec_raw);
  cuda_check(cudaGraphLaunch(exec.get(), stream), "launching the graph");
  cuda_check(cudaStreamSynchronize(stream), "waiting for the transfers");
}

void expect_received(TransferEngine& engine, RankBuffers& b, const std::vector<Flow>& mine, int rank, size_t bytes,
                     cudaStream_t stream) {
  for (const Flow& f : mine) {
    if (f.dst_rank != rank) continue;
    const auto bad = engine.verify(b.dst[size_t(f.src_rank)].get(), bytes, seed_of(f.src_rank), 0, stream);
    EXPECT_FALSE(bad) << "rank " << rank << " from rank " << f.src_rank << ": " << *bad;
  }
}

// Three ranks on one node, each sending to the next: every rank sends one flow and receives one.
// First case: both sides in one fused launch (plain and captured); second case: each flow on its
// own stream (the runner's way for non-fusing engines), with more chunks than the ring has
// slots, so a rank's send and receive must run at once.
TEST(StagedGroup, RingOfThreeRanksOnOneNode) {
  const int gpus = gpu_count();
  const std::vector<Flow> ring{{0, 1}, {1, 2}, {2, 0}};
  testing::run_ranks({0, 0, 0}, [&](const PeerGroup& peers) {
    const int me = peers.rank();
    const int device = me % gpus;
    cuda_check(cudaSetDevice(device), "selecting the GPU");
    const auto resources = make_baseline_resources(0, device);
    const auto why = resources->begin(Method::kStaged, peers);
    ASSERT_FALSE(why) << *why;
    CaseSpec c;
    c.method = Method::kStaged;
    c.flows = ring;
    const std::vector<Flow> mine = flows_of_rank(ring, me);
    Stream stream = make_stream("a test stream");

    const size_t fused_bytes = 10 * (size_t(1) << 20) + 100;  // 3 chunks, the last one short
    {
      RankBuffers b(me, 3, fused_bytes, stream.get());
      const auto engine = resources->make_engine(c);
      engine->prepare(device, me, mine);
      // As the case loop's lock-steps order them: every rank's set-up (allocations, the
      // counters' clearing) is done before any rank's flag kernels spin.
      peers.barrier("every rank prepared the fused case");
      const auto transfers = b.transfers(mine, fused_bytes);
      launch_plain_then_graph(stream.get(), [&](cudaStream_t s) { engine->launch_fused(transfers, s); });
      peers.barrier("every rank finished the fused case");
      expect_received(*engine, b, mine, me, fused_bytes, stream.get());
    }
    // The ranks share one context: freeing the first case's memory (cudaFree waits for the whole
    // context) must end before any rank launches the second case's spinning flag kernels.
    peers.barrier("every rank freed the fused case");
    const size_t split_bytes = 40 * (size_t(1) << 20);  // 10 chunks through 4 slots
    {
      RankBuffers b(me, 3, split_bytes, stream.get());
      const auto engine = resources->make_engine(c);
      engine->prepare(device, me, mine);
      const std::vector<Transfer> transfers = b.transfers(mine, split_bytes);
      std::vector<Stream> streams;
      for (size_t i = 0; i < transfers.size(); ++i) streams.push_back(make_stream("a flow's stream"));
      peers.barrier("every rank prepared the split case");
      for (size_t i = 0; i < transfers.size(); ++i) engine->launch(transfers[i], streams[i].get());
      for (const Stream& s : streams) cuda_check(cudaStreamSynchronize(s.get()), "waiting for a flow");
      peers.barrier("every rank finished the split case");
      expect_received(*engine, b, mine, me, split_bytes, stream.get());
    }
    resources->end(Method::kStaged, peers);
  });
}

// A sender whose receiver never comes: the flag kernel gives up, and the fault names who waited
// for whom in which ring.
TEST(StagedGroup, AReceiverThatNeverComesIsNamed) {
  staging::Layout layout;
  layout.regions = 2;
  SharedHostMemory memory = SharedHostMemory::create(layout.total_bytes(), "a test staging area");
  memory.register_with_device();
  const StagingArea area{memory.host(), memory.device(), layout, {4, 9}};
  StagedEngine engine(area, 7, 0.2);
  engine.prepare(0, 4, {{4, 9}});
  Stream stream = make_stream("a test stream");
  DeviceBuffer src(1 << 20, "a test source");
  engine.launch({src.get(), nullptr, 1 << 20, {4, 9}}, stream.get());
  cuda_check(cudaStreamSynchronize(stream.get()), "waiting for the stalled sender");
  const auto fault = engine.fault();
  ASSERT_TRUE(fault);
  EXPECT_NE(fault->find("rank 4 gave up after"), std::string::npos) << *fault;
  EXPECT_NE(fault->find("waiting for rank 9 to drain slot 0 of the 4->9 staging ring"), std::string::npos) << *fault;
  EXPECT_NE(fault->find("(0, 0) seen, (0, 0) in host memory now"), std::string::npos) << *fault;
  EXPECT_NE(fault->find("the peer never started this case's transfers"), std::string::npos) << *fault;
  EXPECT_EQ(engine.verify(src.get(), 1 << 20, 0, 0, stream.get()), fault);
}

// One NCCL communicator over every rank (one GPU each, up to four); all flows of a rank in one
// group: every rank to every other, then one root to all.
void run_nccl_case(int ranks, const std::vector<Flow>& flows) {
  const size_t bytes = (size_t(3) << 20) + 12;
  std::string id = NcclCommunicator::unique_id();
  std::vector<int> one_node(size_t(ranks), 0);
  testing::run_ranks(one_node, [&](const PeerGroup& peers) {
    const int me = peers.rank();
    cuda_check(cudaSetDevice(me), "selecting the GPU");
    NcclCommunicator comm(id, ranks, me, 60.0);
    Stream stream = make_stream("a test stream");
    RankBuffers b(me, ranks, bytes, stream.get());
    NcclEngine engine(comm);
    ASSERT_TRUE(engine.fuses_flows());
    const std::vector<Flow> mine = flows_of_rank(flows, me);
    engine.prepare(me, me, mine);
    const auto transfers = b.transfers(mine, bytes);
    launch_plain_then_graph(stream.get(), [&](cudaStream_t s) { engine.launch_fused(transfers, s); });
    expect_received(engine, b, mine, me, bytes, stream.get());
    comm.close();
  });
}

TEST(NcclGroupTwoGpus, AllToAllAndOneToAllInOneGroupPerRank) {
  if (!nccl_in_build()) GTEST_SKIP() << kNoNcclReason;
  const int ranks = std::min(gpu_count(), 4);
  if (ranks < 2) GTEST_SKIP() << "one NCCL rank per GPU: needs two GPUs";
  apply_nccl_environment(decide_nccl_environment(NcclPlacement{0, std::vector<std::string>(size_t(ranks), "h"),
                                                               std::vector<int>(size_t(ranks), 0)},
                                                 [](const char* name) { return std::getenv(name); }));
  std::vector<Flow> all_to_all, one_to_all;
  for (int s = 0; s < ranks; ++s)
    for (int d = 0; d < ranks; ++d)
      if (s != d) all_to_all.push_back({s, d});
  for (int d = 1; d < ranks; ++d) one_to_all.push_back({0, d});
  run_nccl_case(ranks, all_to_all);
  run_nccl_case(ranks, one_to_all);
}

}  // namespace
}  // namespace p2pbench
