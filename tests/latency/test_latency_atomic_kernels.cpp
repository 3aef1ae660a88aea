// GPU tests of the latency kernels (ping-pong, pointer chase) and the remote-atomic kernels,
// in one process. Local memory stands in for peer memory where one GPU is all there is: the
// ping-pong then runs both sides as two one-block kernels on two streams of the same GPU.
// With two GPUs that can access each other, the ping-pong and the chase also run across them.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "gpu_peer_access.hpp"
#include "kernels/atomic_kernels.hpp"
#include "kernels/latency_kernels.hpp"

namespace p2pbench::kernels {
namespace {

constexpr uint64_t kMs = 1000 * 1000;
constexpr uint64_t kSecond = 1000 * kMs;

int compute_major(int device) {
  int major = 0;
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
             "querying the compute capability");
  return major;
}

// ========================================================================================
// Ping-pong
// ========================================================================================

enum class Mode { kOneGpu, kTwoGpus };

// One side of the ping-pong: its device, stream and inbox (ce_then_flag: its messages and its
// watchdog's stream too).
struct Side {
  int device = 0;
  Stream stream;
  Stream watchdog;
  DeviceBuffer inbox;
  DeviceBuffer messages;
  Side(int dev, size_t payload, SignalProtocol protocol) : device(dev) {
    cuda_check(cudaSetDevice(dev), "selecting a device");
    stream = make_stream("a ping-pong side");
    watchdog = make_stream("a ping-pong side's watchdog");
    inbox = DeviceBuffer(ping_pong_inbox_bytes(payload, protocol), "a ping-pong inbox");
    messages = DeviceBuffer(std::max<size_t>(16, ping_pong_messages_bytes(payload, protocol)), "ping-pong messages");
  }
};

struct PingPongRun {
  PingPongResult initiator{};
  PingPongResult responder{};
  double wall_s = 0;
};

// The initiator on device 0, the responder on device 0 (kOneGpu) or 1 (kTwoGpus). The inboxes
// are reset once here; `runs` launches follow with epochs 0, 1, ... (no reset in between).
class PingPongRig {
 public:
  PingPongRig(Mode mode, size_t payload, SignalProtocol protocol)
      : payload_(payload),
        protocol_(protocol),
        a_(0, payload, protocol),
        b_(mode == Mode::kTwoGpus ? 1 : 0, payload, protocol),
        results_(2 * sizeof(PingPongResult), "ping-pong results") {
    for (Side* s : {&a_, &b_}) {
      cuda_check(cudaSetDevice(s->device), "selecting a device");
      ping_pong_reset_inbox(s->inbox.get(), s->inbox.size(), s->stream.get());
      cuda_check(cudaStreamSynchronize(s->stream.get()), "zeroing an inbox");
      ping_pong_prepare(payload, protocol);
    }
    cuda_check(cudaSetDevice(0), "selecting device 0");
  }

  // Launches the responder, then the initiator (either may be left out), and waits for both.
  PingPongRun run(uint32_t round_trips, uint32_t epoch, uint64_t timeout_ns, bool with_initiator = true,
                  bool with_responder = true, uint64_t responder_seed = kSeed) {
    auto* res = static_cast<PingPongResult*>(results_.host());
    std::memset(res, 0xab, 2 * sizeof(PingPongResult));  // the kernels must overwrite every field
    auto* dev_res = static_cast<PingPongResult*>(results_.device());
    PingPongArgs args;
    args.payload_bytes = payload_;
    args.round_trips = round_trips;
    args.protocol = protocol_;
    args.seed = kSeed;
    args.epoch = epoch;
    args.timeout_ns = timeout_ns;
    const auto t0 = std::chrono::steady_clock::now();
    if (with_responder) {
      cuda_check(cudaSetDevice(b_.device), "selecting the responder's device");
      PingPongArgs r = args;
      r.my_inbox = b_.inbox.get();
      r.peer_inbox = a_.inbox.get();
      r.initiator = false;
      r.seed = responder_seed;
      r.result = dev_res + 1;
      r.messages = b_.messages.get();
      r.watchdog_stream = b_.watchdog.get();
      enqueue_ping_pong_messages(r, b_.stream.get());
      enqueue_ping_pong(r, b_.stream.get());
    }
    if (with_initiator) {
      cuda_check(cudaSetDevice(a_.device), "selecting the initiator's device");
      PingPongArgs i = args;
      i.my_inbox = a_.inbox.get();
      i.peer_inbox = b_.inbox.get();
      i.initiator = true;
      i.result = dev_res;
      i.messages = a_.messages.get();
      i.watchdog_stream = a_.watchdog.get();
      enqueue_ping_pong_messages(i, a_.stream.get());
      enqueue_ping_pong(i, a_.stream.get());
    }
    for (Side* s : {&a_, &b_}) {
      cuda_check(cudaSetDevice(s->device), "selecting a device");
      cuda_check(cudaStreamSynchronize(s->stream.get()), "waiting for the ping-pong");
      cuda_check(cudaStreamSynchronize(s->watchdog.get()), "waiting for the ping-pong's watchdog");
    }
    cuda_check(cudaSetDevice(0), "selecting device 0");
    PingPongRun out;
    out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.initiator = res[0];
    out.responder = res[1];
    return out;
  }

  static constexpr uint64_t kSeed = 0x5eed0123456789abull;

 private:
  size_t payload_;
  SignalProtocol protocol_;
  Side a_;
  Side b_;
  MappedHostBuffer results_;
};

void expect_clean(const PingPongResult& r, uint32_t rounds, const char* who) {
  SCOPED_TRACE(who);
  EXPECT_EQ(r.timed_out, 0u);
  EXPECT_EQ(r.round_trips_done, rounds);
  EXPECT_EQ(r.bad_payloads, 0u);
  EXPECT_EQ(r.first_bad_round, ~0ull);
  EXPECT_GT(r.elapsed_ns, 0u);
}

struct PingPongCase {
  Mode mode;
  SignalProtocol protocol;
  size_t payload;
};

std::string ping_pong_name(const testing::TestParamInfo<PingPongCase>& info) {
  const PingPongCase& c = info.param;
  return std::string(c.mode == Mode::kTwoGpus ? "two_gpus_" : "one_gpu_") + signal_protocol_name(c.protocol) + "_" +
         std::to_string(c.payload);
}

std::vector<PingPongCase> ping_pong_cases() {
  std::vector<PingPongCase> v;
  for (Mode mode : {Mode::kOneGpu, Mode::kTwoGpus})
    for (SignalProtocol p : {SignalProtocol::kFlagInData, SignalProtocol::kPayloadThenFlag, SignalProtocol::kTmaThenFlag,
                             SignalProtocol::kCeThenFlag})
      for (size_t payload : {size_t{4}, size_t{8}, size_t{12}, size_t{64}, size_t{4096}, size_t{65536}})
        if (p != SignalProtocol::kTmaThenFlag || payload % 16 == 0) v.push_back({mode, p, payload});
  return v;
}

class PingPong : public testing::TestWithParam<PingPongCase> {
 protected:
  void SetUp() override {
    if (GetParam().mode == Mode::kTwoGpus && !testing_support::peer_access_between_gpus_0_and_1())
      GTEST_SKIP() << "needs two GPUs with peer access (the one-GPU cases cover the kernels)";
    if (GetParam().protocol == SignalProtocol::kTmaThenFlag && compute_major(0) < 9)
      GTEST_SKIP() << "tma_then_flag needs compute capability 9.0+";
  }
  // The copy engine's rounds are queued at once: at most kCePingPongMaxRounds a launch.
  uint32_t rounds(uint32_t kernel_rounds) const {
    return GetParam().protocol == SignalProtocol::kCeThenFlag ? kCePingPongMaxRounds : kernel_rounds;
  }
};

// Complete rounds, every payload byte right, on both sides; a second launch with the next
// epoch and no reset in between works too (sequence numbers never collide).
TEST_P(PingPong, CompletesWithCorrectPayloads) {
  const PingPongCase& c = GetParam();
  PingPongRig rig(c.mode, c.payload, c.protocol);
  const uint32_t rounds = this->rounds(c.payload >= 4096 ? 500 : 2000);
  for (uint32_t epoch = 0; epoch < 2; ++epoch) {
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    const PingPongRun r = rig.run(rounds, epoch, 2 * kSecond);
    expect_clean(r.initiator, rounds, "initiator");
    expect_clean(r.responder, rounds, "responder");
    EXPECT_EQ(r.initiator.threads, static_cast<unsigned>(ping_pong_threads(c.payload, c.protocol)));
    std::printf("  %s payload %zu, %u threads: one-way %.1f ns\n", signal_protocol_name(c.protocol), c.payload, r.initiator.threads,
                static_cast<double>(r.initiator.elapsed_ns) / rounds / 2);
  }
}

// A responder that checks against another seed sees every message wrong (but still answers):
// the check really looks at the data, not only at sequence numbers or flags.
TEST_P(PingPong, CountsWrongPayloads) {
  const PingPongCase& c = GetParam();
  PingPongRig rig(c.mode, c.payload, c.protocol);
  const uint32_t rounds = this->rounds(50);
  const PingPongRun r = rig.run(rounds, 0, 2 * kSecond, true, true, PingPongRig::kSeed ^ 1);
  EXPECT_EQ(r.initiator.timed_out, 0u);
  EXPECT_EQ(r.responder.timed_out, 0u);
  EXPECT_EQ(r.responder.bad_payloads, rounds);
  EXPECT_EQ(r.responder.first_bad_round, 0u);
  EXPECT_EQ(r.initiator.bad_payloads, rounds);
  EXPECT_EQ(r.initiator.first_bad_round, 0u);
}

INSTANTIATE_TEST_SUITE_P(LatencySignal, PingPong, testing::ValuesIn(ping_pong_cases()), ping_pong_name);

// The peer never starts: each side gives up after the timeout instead of hanging.
TEST(PingPongTimeout, AbsentPeerTimesOut) {
  for (SignalProtocol fid : {SignalProtocol::kFlagInData, SignalProtocol::kPayloadThenFlag, SignalProtocol::kTmaThenFlag,
                             SignalProtocol::kCeThenFlag}) {
    if (fid == SignalProtocol::kTmaThenFlag && compute_major(0) < 9) continue;
    SCOPED_TRACE(signal_protocol_name(fid));
    const uint64_t timeout = 50 * kMs;
    // A fresh rig each: the initiator's first message stays in the responder's inbox.
    PingPongRig rig_a(Mode::kOneGpu, 64, fid);
    const PingPongRun no_responder = rig_a.run(10, 0, timeout, true, false);
    EXPECT_EQ(no_responder.initiator.timed_out, 1u);
    EXPECT_EQ(no_responder.initiator.round_trips_done, 0u);
    EXPECT_LT(no_responder.wall_s, 5.0);
    PingPongRig rig_b(Mode::kOneGpu, 64, fid);
    const PingPongRun no_initiator = rig_b.run(10, 0, timeout, false, true);
    EXPECT_EQ(no_initiator.responder.timed_out, 1u);
    EXPECT_EQ(no_initiator.responder.round_trips_done, 0u);
    EXPECT_LT(no_initiator.wall_s, 5.0);
  }
}

TEST(PingPongArgs, RefusesBadArguments) {
  DeviceBuffer inbox(1024, "an inbox");
  MappedHostBuffer result(sizeof(PingPongResult), "a result");
  PingPongArgs a;
  a.my_inbox = inbox.get();
  a.peer_inbox = inbox.get();
  a.result = static_cast<PingPongResult*>(result.device());
  a.payload_bytes = 64;
  a.round_trips = 10;
  a.timeout_ns = kSecond;
  EXPECT_FALSE(ping_pong_unsupported_reason(a).has_value());
  for (size_t bad : {size_t{0}, size_t{2}, size_t{6}, kPingPongMaxPayload + 4}) {
    PingPongArgs b = a;
    b.payload_bytes = bad;
    EXPECT_TRUE(ping_pong_unsupported_reason(b).has_value()) << bad;
    EXPECT_THROW(enqueue_ping_pong(b, nullptr), InputError);
  }
  PingPongArgs wrap = a;
  wrap.round_trips = 1u << 20;
  wrap.epoch = 1u << 12;  // (epoch + 1) * round_trips > 2^32 - 1
  EXPECT_TRUE(ping_pong_unsupported_reason(wrap).has_value());
  PingPongArgs zero = a;
  zero.round_trips = 0;
  EXPECT_TRUE(ping_pong_unsupported_reason(zero).has_value());
  // Inbox sizes: flag_in_data 8 bytes per 4 payload bytes (16-aligned); payload_then_flag a
  // 128-byte flag line and the payload rounded to 16.
  const auto fid = SignalProtocol::kFlagInData, ptf = SignalProtocol::kPayloadThenFlag;
  EXPECT_EQ(ping_pong_inbox_bytes(4, fid), 16u);
  EXPECT_EQ(ping_pong_inbox_bytes(64, fid), 128u);
  EXPECT_EQ(ping_pong_inbox_bytes(65536, fid), 131072u);
  EXPECT_EQ(ping_pong_inbox_bytes(4, ptf), 144u);
  EXPECT_EQ(ping_pong_inbox_bytes(65536, ptf), 128u + 65536u);
  EXPECT_EQ(ping_pong_inbox_bytes(65536, SignalProtocol::kTmaThenFlag), 128u + 65536u);
  // ce_then_flag: a slot per round, each the payload rounded to 16.
  EXPECT_EQ(ping_pong_inbox_bytes(4, SignalProtocol::kCeThenFlag), 128u + 16u * kCePingPongMaxRounds);
  EXPECT_EQ(ping_pong_messages_bytes(65536, SignalProtocol::kCeThenFlag), 65536u * kCePingPongMaxRounds);
  EXPECT_EQ(ping_pong_messages_bytes(65536, ptf), 0u);
  EXPECT_EQ(ping_pong_threads(4, fid), 32);
  EXPECT_EQ(ping_pong_threads(65536, fid), 1024);
  EXPECT_EQ(ping_pong_threads(65536, ptf), 1024);
  // A bulk copy moves 16-byte units; the copy engine's rounds are queued at once.
  PingPongArgs tma = a;
  tma.protocol = SignalProtocol::kTmaThenFlag;
  tma.payload_bytes = 20;
  EXPECT_TRUE(ping_pong_unsupported_reason(tma).has_value());
  PingPongArgs ce = a;
  ce.protocol = SignalProtocol::kCeThenFlag;
  EXPECT_FALSE(ping_pong_unsupported_reason(ce).has_value());
  ce.round_trips = kCePingPongMaxRounds + 1;
  EXPECT_TRUE(ping_pong_unsupported_reason(ce).has_value());
}

// ========================================================================================
// Pointer chase
// ========================================================================================

constexpr size_t kChaseBytes = size_t{2} << 20;
constexpr size_t kChaseStride = 128;

// Builds the chain on `owner`, chases it from device 0 (through peer access if owner != 0).
void check_chase(int owner, ChaseLoad load, uint64_t loads) {
  cuda_check(cudaSetDevice(owner), "selecting the owner");
  DeviceBuffer buf(kChaseBytes, "the chase buffer");
  Stream owner_stream = make_stream("the chain builder");
  build_chase_chain(buf.get(), kChaseBytes, kChaseStride, owner_stream.get());
  cuda_check(cudaStreamSynchronize(owner_stream.get()), "building the chain");

  // Every element points one stride further, the last one back to 0.
  std::vector<uint64_t> host(kChaseBytes / 8);
  cuda_check(cudaMemcpy(host.data(), buf.get(), kChaseBytes, cudaMemcpyDeviceToHost), "reading the chain");
  const size_t n = kChaseBytes / kChaseStride;
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(host[i * kChaseStride / 8], ((i + 1) % n) * kChaseStride) << "element " << i;

  cuda_check(cudaSetDevice(0), "selecting the reader");
  Stream stream = make_stream("the chase");
  MappedHostBuffer result(sizeof(ChaseResult), "the chase result");
  auto* r = static_cast<ChaseResult*>(result.host());
  std::memset(r, 0xab, sizeof(ChaseResult));
  for (int launch = 0; launch < 2; ++launch) {  // the first one warms up (TLB)
    enqueue_pointer_chase(buf.get(), kChaseBytes, kChaseStride, loads, static_cast<ChaseResult*>(result.device()),
                          stream.get(), load);
    cuda_check(cudaStreamSynchronize(stream.get()), "waiting for the chase");
  }
  EXPECT_EQ(r->loads, loads);
  EXPECT_EQ(r->final_offset, expected_chase_end(kChaseBytes, kChaseStride, loads));
  EXPECT_GT(r->elapsed_ns, 0u);
  EXPECT_GT(r->elapsed_cycles, 0u);
  const double ns = static_cast<double>(r->elapsed_ns) / static_cast<double>(loads);
  EXPECT_GT(ns, 1.0);       // no GPU memory answers a dependent load in under a nanosecond
  EXPECT_LT(ns, 100000.0);  // nor takes 100 us
  std::printf("  chase %s, owner %d, reader 0: %.1f ns/load (%.1f cycles/load)\n",
              load == ChaseLoad::kStrong ? "relaxed.sys" : "weak", owner, ns,
              static_cast<double>(r->elapsed_cycles) / static_cast<double>(loads));
}

TEST(PointerChase, LocalEndsWhereExpected) {
  // 100000 = 6 laps of the 16384-element chain and 1696 steps: the end offset is not 0.
  check_chase(0, ChaseLoad::kStrong, 100000);
  check_chase(0, ChaseLoad::kWeak, 100000);
  check_chase(0, ChaseLoad::kStrong, 16384);
}

TEST(PointerChaseTwoGpus, PeerEndsWhereExpected) {
  if (!testing_support::peer_access_between_gpus_0_and_1()) GTEST_SKIP() << "needs two GPUs with peer access";
  check_chase(1, ChaseLoad::kStrong, 20000);
  check_chase(1, ChaseLoad::kWeak, 20000);
}

// A chain of the reader's own addresses, written through its peer mapping.
TEST(PointerChaseTwoGpus, AbsoluteChainThroughPeerEndsWhereExpected) {
  if (!testing_support::peer_access_between_gpus_0_and_1()) GTEST_SKIP() << "needs two GPUs with peer access";
  cuda_check(cudaSetDevice(1), "selecting the owner");
  DeviceBuffer buf(kChaseBytes, "the chase buffer");
  cuda_check(cudaSetDevice(0), "selecting the reader");
  Stream stream = make_stream("the chase");
  build_chase_chain(buf.get(), kChaseBytes, kChaseStride, stream.get(), buf.get());
  // The stream does not block: the copy below would not wait for the chain without this.
  cuda_check(cudaStreamSynchronize(stream.get()), "building the chain");
  std::vector<uint64_t> host(kChaseBytes / 8);
  cuda_check(cudaMemcpy(host.data(), buf.get(), kChaseBytes, cudaMemcpyDeviceToHost), "reading the chain");
  const size_t n = kChaseBytes / kChaseStride;
  const auto base = reinterpret_cast<uint64_t>(buf.get());
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(host[i * kChaseStride / 8], base + ((i + 1) % n) * kChaseStride) << i;
  MappedHostBuffer result(sizeof(ChaseResult), "the chase result");
  auto* r = static_cast<ChaseResult*>(result.host());
  enqueue_pointer_chase(buf.get(), kChaseBytes, kChaseStride, 20000, static_cast<ChaseResult*>(result.device()),
                        stream.get(), ChaseLoad::kAbsolute);
  cuda_check(cudaStreamSynchronize(stream.get()), "waiting for the chase");
  EXPECT_EQ(r->final_offset, expected_chase_end(kChaseBytes, kChaseStride, 20000));
}

TEST(PointerChase, HostHelpers) {
  EXPECT_EQ(expected_chase_end(kChaseBytes, kChaseStride, 0), 0u);
  EXPECT_EQ(expected_chase_end(kChaseBytes, kChaseStride, 1), 128u);
  EXPECT_EQ(expected_chase_end(kChaseBytes, kChaseStride, 16384), 0u);
  EXPECT_EQ(expected_chase_end(kChaseBytes, kChaseStride, 16385), 128u);
  EXPECT_TRUE(chase_unsupported_reason(kChaseBytes, 12).has_value());
  EXPECT_TRUE(chase_unsupported_reason(64, 128).has_value());
  EXPECT_FALSE(chase_unsupported_reason(kChaseBytes, kChaseStride).has_value());
}

// ========================================================================================
// Remote atomics (local memory)
// ========================================================================================

constexpr AtomicType kAllTypes[] = {AtomicType::kU32,   AtomicType::kF32,    AtomicType::kF32x4, AtomicType::kF16x2,
                                    AtomicType::kBf16x2, AtomicType::kF16x8, AtomicType::kBf16x8};

struct AtomicCase {
  AtomicType type;
  AtomicPattern pattern;
  int blocks;
  int threads;
  uint32_t hot;
};

constexpr uint64_t kLaunches = 3;  // alternating +, -, +: each element ends at threads on it x net

// An odd op count (each thread nets 1) for distinct shapes, an even one (nets 2, its last op
// doubled) for hot spots, so both balanced sequences are checked.
AtomicShape shape_for(const AtomicCase& c) {
  AtomicShape s;
  s.type = c.type;
  s.pattern = c.pattern;
  s.blocks = c.blocks;
  s.threads = c.threads;
  s.hot_addresses = c.hot;
  s.ops_per_thread = c.pattern == AtomicPattern::kDistinct ? 15 : 16;
  return s;
}

std::vector<AtomicCase> atomic_cases() {
  std::vector<AtomicCase> v;
  for (AtomicType t : kAllTypes) {
    v.push_back({t, AtomicPattern::kDistinct, 8, 256, 0});
    v.push_back({t, AtomicPattern::kHotSpot, 4, 256, 32});
    v.push_back({t, AtomicPattern::kHotSpot, 1, 64, 1});
    v.push_back({t, AtomicPattern::kHotSpot, 3, 32, 7});  // 96 threads: elements 0..5 get one thread more
  }
  return v;
}

std::string atomic_name(const testing::TestParamInfo<AtomicCase>& info) {
  const AtomicCase& c = info.param;
  std::string name = std::string(atomic_type_name(c.type)) + "_" + atomic_pattern_name(c.pattern);
  if (c.pattern == AtomicPattern::kHotSpot) name += std::to_string(c.hot);
  return name + "_b" + std::to_string(c.blocks) + "_t" + std::to_string(c.threads);
}

class Atomics : public testing::TestWithParam<AtomicCase> {};

// Exact totals after 3 launches; then one planted wrong element is found, at its index.
TEST_P(Atomics, VerifiesExactlyAndCatchesAWrongValue) {
  const AtomicShape shape = shape_for(GetParam());
  ASSERT_GE(shape.ops_per_thread, 1u);
  const int device = current_device();
  if (auto why = atomic_unsupported_reason(shape, device)) {
    // Only the sm_90 reductions may be refused, and only below sm_90.
    ASSERT_LT(compute_major(device), 9) << *why;
    EXPECT_NE(why->find("9.0"), std::string::npos) << *why;
    GTEST_SKIP() << *why;
  }
  DeviceBuffer target(atomic_target_bytes(shape), "the atomics target");
  Stream stream = make_stream("the atomics");
  atomic_prepare(shape);
  atomic_reset(target.get(), shape, stream.get());
  for (uint64_t i = 0; i < kLaunches; ++i) enqueue_atomics(shape, target.get(), i % 2 == 1, stream.get());
  const auto ok = atomic_verify(shape, target.get(), kLaunches, stream.get());
  EXPECT_FALSE(ok.has_value()) << *ok;
  // One launch less than were made expects 0 everywhere: every element is wrong.
  const auto short_count = atomic_verify(shape, target.get(), kLaunches - 1, stream.get());
  ASSERT_TRUE(short_count.has_value());
  EXPECT_NE(short_count->find("first: element 0 "), std::string::npos) << *short_count;
  EXPECT_NE(short_count->find(std::to_string(atomic_elements(shape)) + " of "), std::string::npos) << *short_count;

  // Plant a wrong low half-word (a different value in every type) in the middle element.
  const uint64_t elements = atomic_elements(shape);
  const uint64_t victim = elements / 2;
  uint16_t wrong = 0x1234;
  cuda_check(cudaMemcpy(static_cast<uint8_t*>(target.get()) + victim * atomic_bytes_per_op(shape), &wrong,
                        sizeof(wrong), cudaMemcpyHostToDevice),
             "planting a wrong value");
  // A copy from pageable memory may return before it lands, on the legacy stream, which the
  // verification's non-blocking stream does not wait for.
  cuda_check(cudaDeviceSynchronize(), "planting a wrong value");
  const auto caught = atomic_verify(shape, target.get(), kLaunches, stream.get());
  ASSERT_TRUE(caught.has_value());
  EXPECT_NE(caught->find("1 of " + std::to_string(elements) + " elements wrong"), std::string::npos) << *caught;
  EXPECT_NE(caught->find("first: element " + std::to_string(victim) + " "), std::string::npos) << *caught;
}

INSTANTIATE_TEST_SUITE_P(RemoteAtomics, Atomics, testing::ValuesIn(atomic_cases()), atomic_name);

TEST(AtomicShapes, UnsupportedShapesGiveAReason) {
  const int device = current_device();
  AtomicShape ok{AtomicType::kU32, AtomicPattern::kDistinct, 4, 256, 16, 0};
  EXPECT_FALSE(atomic_unsupported_reason(ok, device).has_value());

  AtomicShape s = ok;
  s.blocks = 0;
  EXPECT_TRUE(atomic_unsupported_reason(s, device).has_value());
  s = ok;
  s.threads = 2048;
  EXPECT_TRUE(atomic_unsupported_reason(s, device).has_value());
  s = ok;
  s.ops_per_thread = 0;
  EXPECT_TRUE(atomic_unsupported_reason(s, device).has_value());
  s = ok;
  s.pattern = AtomicPattern::kHotSpot;
  s.hot_addresses = 0;
  EXPECT_TRUE(atomic_unsupported_reason(s, device).has_value());

  // Not exact: 132 x 1024 threads on one bf16 address can reach 135168 > 256.
  AtomicShape hot{AtomicType::kBf16x2, AtomicPattern::kHotSpot, 132, 1024, 1, 1};
  const auto why = atomic_unsupported_reason(hot, device);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("exactly"), std::string::npos) << *why;
  EXPECT_THROW(enqueue_atomics(hot, nullptr, false, nullptr), InputError);

  // f16 holds 2048: 2048 threads on one address are exact with an odd op count (each nets 1),
  // not with an even one (each nets 2), and the reason says so.
  AtomicShape f16{AtomicType::kF16x2, AtomicPattern::kHotSpot, 2, 1024, 15, 1};
  EXPECT_EQ(atomic_net_per_thread(f16), 1u);
  EXPECT_FALSE(atomic_unsupported_reason(f16, device).has_value());
  f16.ops_per_thread = 16;
  EXPECT_EQ(atomic_net_per_thread(f16), 2u);
  const auto even = atomic_unsupported_reason(f16, device);
  ASSERT_TRUE(even.has_value());
  EXPECT_NE(even->find("odd ops_per_thread"), std::string::npos) << *even;

  // Accounting: a vector op counts once and moves 16 bytes.
  AtomicShape v4{AtomicType::kF32x4, AtomicPattern::kHotSpot, 2, 128, 8, 32};
  EXPECT_EQ(atomic_operations(v4), 2u * 128u * 8u);
  EXPECT_EQ(atomic_bytes_per_op(v4), 16u);
  EXPECT_EQ(atomic_target_bytes(v4), 32u * 16u);
  EXPECT_EQ(atomic_target_bytes(ok), 4u * 256u * 4u);

  if (compute_major(device) < 9) {
    for (AtomicType t : {AtomicType::kF32x4, AtomicType::kBf16x2, AtomicType::kF16x8, AtomicType::kBf16x8}) {
      AtomicShape sm90 = ok;
      sm90.type = t;
      EXPECT_TRUE(atomic_unsupported_reason(sm90, device).has_value()) << atomic_type_name(t);
    }
  }
}

}  // namespace
}  // namespace p2pbench::kernels
