// The put_signal methods: one protocol (put_signal_protocol.hpp), three senders.
//   put_signal_ldst  a warp per channel copies each chunk with 16-byte loads and stores
//   put_signal_tma   a warp per channel moves each chunk with bulk copies through shared memory
//   put_signal_ce    the copy engine: per chunk a stream wait for the credit, cudaMemcpyAsync
//                    (or one cudaMemcpyBatchAsync for a group's puts), and a stream-ordered write
//                    of the signal, a stream per credit slot (no SM on the sender)
// Both ends run at once (the receiver is a kernel of one thread per channel), so a flow's two
// ranks must be on different GPUs or MPS clients of one.
#include "methods/put_signal/put_signal_engine.hpp"

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "engines/engine_registry.hpp"
#include "plan/device_memory.hpp"

namespace p2pbench::put_signal {
namespace {

// The copy engine's commands per transfer (a wait, a take, the copies and a signal per signalled
// chunk): a sample's graph is queued behind the closed start gate, so its commands must fit in
// the GPU's command queue, or the host's launch blocks until the gate gives up. Measured on an
// H200 under MPS: 64 chunks of four commands ran, 4096 never started (the gate gave up on both ranks).
// One stream takes 1020 commands behind a closed gate before the host blocks (an H200,
// tools/probes/queue_depth_probe.cpp): 256 leaves room for the gate, forks and joins, and for the
// other transfers of an interference phase.
constexpr uint64_t kMaxCeCommands = 256;

bool signal_group_size(uint64_t v) { return v >= 1 && v <= 64; }
bool zero_or_one(uint64_t v) { return v <= 1; }

}  // namespace

PutSignalEngine::PutSignalEngine(Sender sender, const CaseSpec& c) : sender_(sender), c_(c) {
  g_.bytes = c.bytes;
  // The protocol's chunk is what one signal covers: for the copy engine, signal_group puts.
  const uint64_t group = sender == Sender::kCe ? c.signal_group.value_or(1) : 1;
  const uint64_t signalled = c.chunk_bytes.value_or(0) * group;
  g_.chunk_bytes = signalled > UINT32_MAX ? 0 : uint32_t(signalled);
  if (group > 1) ce_signals_.copy_bytes = uint32_t(c.chunk_bytes.value_or(0));
  ce_signals_.by_copy = sender == Sender::kCe && c.signal_copy.value_or(0) == 1;
  ce_signals_.batched = sender == Sender::kCe && c.copy_batch.value_or(0) == 1;
  g_.in_flight = uint32_t(c.chunks_in_flight.value_or(1));
  g_.channels = sender == Sender::kCe ? 1u : uint32_t(*c.blocks) * uint32_t(*c.threads / 32);
}

std::optional<std::string> PutSignalEngine::unsupported_reason(int device) const {
  if (c_.chunk_bytes && *c_.chunk_bytes * c_.signal_group.value_or(1) > UINT32_MAX)
    return "chunk_bytes x signal_group must be below 4 GiB";
  if (auto why = g_.unsupported_reason()) return why;
  const uint64_t commands = sender_ == Sender::kCe ? CopyEngineSender::commands(g_, ce_signals_) : 0;
  if (commands > kMaxCeCommands)
    return std::to_string(g_.bytes) + " bytes in signals of " + std::to_string(g_.chunk_bytes) + " bytes queue " +
           std::to_string(commands) + " copy-engine commands, more than the " +
           std::to_string(kMaxCeCommands) + " a gated transfer may queue: use larger chunks or groups, or smaller sizes";
  switch (sender_) {
    case Sender::kLdst: return ldst_unsupported_reason(*c_.blocks, *c_.threads, device);
    case Sender::kTma: return tma_unsupported_reason(*c_.blocks, *c_.threads, *c_.smem_bytes, device);
    case Sender::kCe: return std::nullopt;
  }
  return std::nullopt;
}

void PutSignalEngine::prepare(int device, int rank, const std::vector<Flow>&) {
  rank_ = rank;
  if (sender_ == Sender::kLdst) ldst_prepare(device);
  if (sender_ == Sender::kTma) tma_prepare(*c_.threads, *c_.smem_bytes, device);
  if (sender_ == Sender::kCe && !ce_) ce_ = std::make_unique<CopyEngineSender>();
}

Transfer PutSignalEngine::transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const {
  const bool sender = e.flow.src_rank == e.rank;
  Transfer t{static_cast<const char*>(e.local_src) + offset,
             static_cast<char*>(sender ? e.peer_dst : e.local_dst) + offset, bytes, e.flow};
  t.local_signal_area = e.local_signal_area;
  t.peer_signal_area = e.peer_signal_area;
  return t;
}

void PutSignalEngine::before_sample(const Endpoints& e, uint64_t source_seed, cudaStream_t stream) {
  void* mine = region(e.local_signal_area, e.flow, e.rank);
  reset_region(mine, source_seed, stream);
  regions_[mine] = {e.flow, e.flow.dst_rank == e.rank, e.local_dst, source_seed};
  heartbeat_ = e.heartbeat;
}

void PutSignalEngine::launch(const Transfer& t, cudaStream_t stream) {
  const Side s = side(t);
  if (!sends(t.flow)) return receive(s, Ordering::kReleaseAcquire, stream);
  switch (sender_) {
    case Sender::kLdst: return ldst_send(s, *c_.blocks, *c_.threads, Ordering::kReleaseAcquire, stream);
    case Sender::kTma: return tma_send(s, *c_.blocks, *c_.threads, *c_.smem_bytes, Ordering::kReleaseAcquire, stream);
    case Sender::kCe: return ce_->send(s, Ordering::kReleaseAcquire, ce_signals_, stream);
  }
}

uint64_t PutSignalEngine::queued_commands() const {
  return sender_ == Sender::kCe ? CopyEngineSender::commands(g_, ce_signals_) : 1;
}

std::optional<int> PutSignalEngine::measure_sms_used(const Transfer& t, cudaStream_t) {
  if (!sends(t.flow)) return std::nullopt;
  if (sender_ != Sender::kCe) return *c_.blocks;
  // The 4-byte copies of signal_copy 1 wait for a free SM (two H200 with every SM held:
  // test_put_signal_kernels): no SM count is claimed for them; stream writes take none.
  return ce_signals_.by_copy ? std::nullopt : std::optional<int>(0);
}

std::optional<std::string> PutSignalEngine::stalled() {
  for (const auto& [mine, end] : regions_) {
    const RegionHeader h = header_of(mine);
    if (!h.timed_out) continue;
    return std::string("put_signal ") + std::to_string(end.flow.src_rank) + "->" + std::to_string(end.flow.dst_rank) +
           ": the " + (end.receives ? "receiver" : "sender") + " gave up after " + std::to_string(int(kTimeoutS)) +
           " s waiting for the " + (h.timed_out == kWaitedForSignal ? "signal" : "credit") + " of chunk " +
           std::to_string(h.stuck_chunk);
  }
  return std::nullopt;
}

std::optional<std::string> PutSignalEngine::spot_check_failures(const void* dst) {
  for (const auto& [mine, end] : regions_) {
    if (!end.receives || end.dst != dst) continue;
    const RegionHeader h = header_of(mine);
    if (h.bad_chunks)
      return std::to_string(h.bad_chunks) + " chunks were not all there when their signal was (chunk " +
             std::to_string(h.first_bad_chunk - 1) + " among them)";
  }
  return std::nullopt;
}

PutSignalEngine::Received PutSignalEngine::received_at(const void* dst) const {
  for (const auto& [mine, end] : regions_)
    if (end.receives && end.dst == dst) return {end.flow, end.seed};
  throw RuntimeFailure("rank " + std::to_string(rank_) + " receives no put_signal flow into the buffer it was asked about");
}

std::optional<std::string> PutSignalEngine::verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                                   cudaStream_t stream) {
  if (auto bad = spot_check_failures(dst)) return bad;
  return TransferEngine::verify(dst, bytes, seed, offset, stream);
}

// Read once this rank's work of the sample has finished (plain copy: nothing of it still runs).
RegionHeader PutSignalEngine::header_of(const void* region) {
  return header_reader_.read(static_cast<const RegionHeader*>(region), "a put_signal end's report");
}

// `rank`'s region for `flow` in `area` (a signal area of `rank`).
char* PutSignalEngine::region(void* area, const Flow& flow, int rank) const {
  return static_cast<char*>(area) + signal_region(c_, flow, rank) * kSignalRegionBytes;
}

Side PutSignalEngine::side(const Transfer& t) const {
  const Flow& f = t.flow;
  const bool sender = sends(f);
  const FlowShape shape = flow_shape(f);
  Side s;
  s.g = g_;
  s.g.bytes = shape.bytes;
  s.gather = shape.gather;
  s.bf16_tokens = bf16_tokens_;
  s.src = t.src;
  s.dst = t.dst;
  s.ready = reinterpret_cast<uint32_t*>(region(sender ? t.peer_signal_area : t.local_signal_area, f, f.dst_rank) +
                                        kReadyOffset);
  s.busy = reinterpret_cast<uint32_t*>(region(sender ? t.local_signal_area : t.peer_signal_area, f, f.src_rank) +
                                       kBusyOffset);
  s.header = reinterpret_cast<RegionHeader*>(region(t.local_signal_area, f, rank_));
  s.timeout_ns = uint64_t(kTimeoutS * 1e9);
  s.heartbeat = heartbeat_;  // a whole-job pause does not count
  return s;
}

MethodInfo put_signal_info(const char* name, const char* title, const char* color, int order, const char* help,
                           std::vector<SweptAxis> swept) {
  // Under the sanitizer a process's kernels run one at a time, so a rank's sender and receiver
  // (bidir, patterns) would wait for each other; tests/put_signal runs the kernels serialized
  // within their credits there instead.
  MethodInfo m{Method{}, name, MethodKind::kCopy, {}, title, color, order, false,
               "its sender and receiver kernels wait for each other", help, std::move(swept)};
  m.needs_both_ends_running = true;
  m.push_only = true;
  return m;
}

namespace {

bool chunk_size(uint64_t v) { return v >= kAlignment && v % kAlignment == 0 && v <= (1ull << 30); }
bool in_flight_count(uint64_t v) { return v >= 1 && v <= 1024; }
}  // namespace

SweptAxis chunk_axis(uint64_t default_bytes, const char* help) {
  return {ShapeAxis::kChunkBytes, {default_bytes}, chunk_size, "chunk_bytes must be a multiple of 16 from 16 B to 1 GiB",
          help};
}
SweptAxis in_flight_axis() {
  return {ShapeAxis::kChunksInFlight, {4}, in_flight_count, "chunks_in_flight must be 1..1024",
          "puts a channel may have unconsumed (credits)"};
}
SweptAxis warps_axis() { return threads_axis(256, "threads per block of the sender: a channel per warp"); }
SweptAxis tma_smem_axis() {
  return {ShapeAxis::kSmemBytes, {131072}, nullptr, "", "shared memory per sender block (two stages per warp)"};
}

namespace {

const char* const kBlocksHelp = "blocks (= SMs) of the sender";
const char* const kChunkHelp = "bytes per put, each followed by its signal";

std::unique_ptr<TransferEngine> ldst_engine(const CaseSpec& c) { return std::make_unique<PutSignalEngine>(Sender::kLdst, c); }
std::unique_ptr<TransferEngine> tma_engine(const CaseSpec& c) { return std::make_unique<PutSignalEngine>(Sender::kTma, c); }
std::unique_ptr<TransferEngine> ce_engine(const CaseSpec& c) { return std::make_unique<PutSignalEngine>(Sender::kCe, c); }

}  // namespace

// The three senders of one flow may be the transfer beside an interference workload: the
// interference loop runs the receiver on the other rank (the tokens methods route many flows
// and stay out).
P2PBENCH_REGISTER_METHOD(kPutSignalLdst,
                         beside_workload(put_signal_info("put_signal_ldst", "put+signal LD/ST", "tab:olive", 12,
                                         "chunks put by warps with 16-byte stores, each followed by a release flag the "
                                         "receiver waits on, credits back",
                                         {blocks_axis(16, kBlocksHelp), warps_axis(),
                                          chunk_axis(16384, kChunkHelp), in_flight_axis()})),
                         ldst_engine);
P2PBENCH_REGISTER_METHOD(kPutSignalTma,
                         beside_workload(put_signal_info("put_signal_tma", "put+signal TMA", "tab:cyan", 13,
                                         "chunks put by warps with bulk copies (TMA) through shared memory, each "
                                         "completed, then flagged; credits back",
                                         {blocks_axis(16, kBlocksHelp), warps_axis(), tma_smem_axis(),
                                          chunk_axis(16384, kChunkHelp), in_flight_axis()})),
                         tma_engine);
P2PBENCH_REGISTER_METHOD(kPutSignalCe,
                         beside_workload(put_signal_info("put_signal_ce", "put+signal copy engine", "tab:gray", 14,
                                         "chunks put by the copy engine, a stream-ordered flag behind each group of "
                                         "them (a stream write or a 4-byte copy), a stream per group in flight (no SM "
                                         "on the sender); credits back",
                                         // larger chunks: each costs about 10 us of stream operations
                                         {chunk_axis(1048576, kChunkHelp), in_flight_axis(),
                                          {ShapeAxis::kSignalGroup, {1}, signal_group_size,
                                           "signal_group must be 1..64",
                                           "puts per signal (and per credit): the receiver waits for each group"},
                                          {ShapeAxis::kSignalCopy, {0}, zero_or_one, "signal_copy must be 0 or 1",
                                           "0: the signal and the credit's take are stream memory writes (no SM); 1: "
                                           "4-byte copies of a device word behind the puts (these wait for a free SM)"},
                                          {ShapeAxis::kCopyBatch, {0}, zero_or_one, "copy_batch must be 0 or 1",
                                           "0: a cudaMemcpyAsync per put; 1: a group's puts in one cudaMemcpyBatchAsync "
                                           "(no graph holds it: the sample's transfers are queued one by one)"}})),
                         ce_engine);

}  // namespace p2pbench::put_signal
