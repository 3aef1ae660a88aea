// The tokens methods' kernels on one GPU, one kernel at a time (so compute-sanitizer can run
// them): the token data is bf16 a model could hold; the dispatch's gathered puts land every
// token where the layout says and the receiver's spot check passes; the combine's sum matches
// its check, and each check fails when one byte is wrong.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/signal_area.hpp"
#include "kernels/pattern_device.cuh"
#include "methods/put_signal/put_signal_kernels.hpp"
#include "methods/tokens/token_kernels.hpp"
#include "methods/tokens/token_routing.hpp"

namespace {

using namespace p2pbench;
using namespace p2pbench::tokens;

constexpr uint32_t kHidden = 14336;

std::vector<uint32_t> indices(const std::vector<uint64_t>& slots) {
  std::vector<uint32_t> sent;
  for (uint64_t t = 0; t < slots.size(); ++t)
    if (slots[t] != kNotSent) sent.push_back(uint32_t(t));
  return sent;
}

DeviceBuffer upload(const std::vector<uint32_t>& words) {
  DeviceBuffer b(std::max<size_t>(1, words.size()) * 4, "test words");
  cuda_check(cudaMemcpy(b.get(), words.data(), words.size() * 4, cudaMemcpyHostToDevice), "upload");
  return b;
}

// Runs `check` into mapped memory and returns the differing bytes.
template <typename Check>
unsigned long long mismatches(Check check) {
  MappedHostBuffer result(sizeof(kernels::PatternCheck), "a check");
  auto* found = static_cast<kernels::PatternCheck*>(result.host());
  *found = {0, ~0ull};
  check(static_cast<kernels::PatternCheck*>(result.device()));
  cuda_check(cudaDeviceSynchronize(), "the check");
  return found->mismatches;
}

void flip_byte(void* at) {
  uint8_t b = 0;
  cuda_check(cudaMemcpy(&b, at, 1, cudaMemcpyDeviceToHost), "reading a byte");
  b ^= 0x01;
  cuda_check(cudaMemcpy(at, &b, 1, cudaMemcpyHostToDevice), "flipping a byte");
}

TEST(TokenData, IsFiniteNormalBf16OfBoundedMagnitude) {
  uint64_t bits = 0x0123456789abcdefull;
  for (int i = 0; i < 100000; ++i) {
    bits = bits * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t word = kernels::bf16_lanes(bits);
    for (int lane = 0; lane < 4; ++lane) {
      const uint32_t exponent = (word >> (16 * lane + 7)) & 0xff;
      ASSERT_GE(exponent, 125u);  // 0.25 <= |x|
      ASSERT_LE(exponent, 128u);  // |x| < 4
    }
  }
}

// Rank 0 of 3 dispatches 64 tokens to rank 1 with the LD/ST and TMA senders, serialized within
// the credits: every token lands at its slot of the block, verified in full and spot-checked.
class Dispatch : public ::testing::TestWithParam<bool> {};

TEST_P(Dispatch, GatheredTokensLandInTheirSlots) {
  const bool tma = GetParam();
  RouterSpec spec;
  spec.tokens_per_rank = 64;
  const Routing r = route(spec, 3, 0);
  const std::vector<uint32_t> sent = indices(slots_in_block(r, 1));
  ASSERT_GT(sent.size(), 0u);
  ASSERT_LT(sent.size(), 64u);  // three ranks: some tokens skip rank 1
  DeviceBuffer src(64 * kHidden, "source"), dst(64 * kHidden, "destination");
  DeviceBuffer send_region(kSignalRegionBytes, "sender region"), recv_region(kSignalRegionBytes, "receiver region");
  const DeviceBuffer gather = upload(sent);
  const uint64_t seed = 77;
  fill_tokens(src.get(), 64 * kHidden, seed, nullptr);
  cuda_check(cudaMemset(dst.get(), 0xa5, 64 * kHidden), "poison");
  put_signal::reset_region(send_region.get(), seed, nullptr);
  put_signal::reset_region(recv_region.get(), seed, nullptr);

  put_signal::Side s;
  s.g = {sent.size() * kHidden, kHidden, 4, 16};  // 4 channels x 16 credits: the sender never waits
  s.src = src.get();
  s.dst = dst.get();
  s.ready = reinterpret_cast<uint32_t*>(static_cast<char*>(recv_region.get()) + put_signal::kReadyOffset);
  s.busy = reinterpret_cast<uint32_t*>(static_cast<char*>(send_region.get()) + put_signal::kBusyOffset);
  s.timeout_ns = 10'000'000'000ull;
  s.gather = static_cast<const uint32_t*>(gather.get());
  s.bf16_tokens = true;
  put_signal::Side sender = s, receiver = s;
  sender.header = static_cast<put_signal::RegionHeader*>(send_region.get());
  receiver.header = static_cast<put_signal::RegionHeader*>(recv_region.get());
  if (tma) {
    put_signal::tma_prepare(64, 65536, 0);
    put_signal::tma_send(sender, 2, 64, 65536, put_signal::Ordering::kReleaseAcquire, nullptr);
  } else {
    put_signal::ldst_prepare(0);
    put_signal::ldst_send(sender, 2, 64, put_signal::Ordering::kReleaseAcquire, nullptr);
  }
  put_signal::receive(receiver, put_signal::Ordering::kReleaseAcquire, nullptr);
  cuda_check(cudaDeviceSynchronize(), "the dispatch");
  put_signal::RegionHeader h{};
  cuda_check(cudaMemcpy(&h, recv_region.get(), sizeof h, cudaMemcpyDeviceToHost), "the receiver's header");
  EXPECT_EQ(h.timed_out, 0u);
  EXPECT_EQ(h.bad_chunks, 0u);
  auto check = [&](kernels::PatternCheck* out) {
    check_tokens(dst.get(), sent.size(), kHidden, static_cast<const uint32_t*>(gather.get()), seed, out, nullptr);
  };
  EXPECT_EQ(mismatches(check), 0u);
  flip_byte(static_cast<char*>(dst.get()) + (sent.size() - 1) * kHidden + 5);
  EXPECT_EQ(mismatches(check), 1u);
}

INSTANTIATE_TEST_SUITE_P(Senders, Dispatch, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "tma" : "ldst"; });

// Rank 0 of 3 adds what ranks 1 and 2 returned: the sum matches its check, which sees one flipped byte.
TEST(Combine, SumMatchesItsCheckAndTheCheckCanFail) {
  RouterSpec spec;
  spec.tokens_per_rank = 96;
  spec.skew = Skew::kZipf;
  const Routing mine = route(spec, 3, 0);
  CombineInputs in;
  in.ranks = 3;
  in.tokens = spec.tokens_per_rank;
  in.hidden_bytes = kHidden;
  std::vector<uint32_t> slots(in.tokens * 3, kNoSlot);
  std::vector<DeviceBuffer> returned;
  for (int r = 1; r < 3; ++r) {
    const std::vector<uint64_t> rows = slots_in_block(mine, r);
    for (uint64_t t = 0; t < in.tokens; ++t)
      if (rows[t] != kNotSent) slots[t * 3 + uint64_t(r)] = uint32_t(rows[t]);
    returned.emplace_back(in.tokens * kHidden, "returned tokens");
    in.seed[r] = 1000 + uint64_t(r);
    fill_tokens(returned.back().get(), in.tokens * kHidden, in.seed[r], nullptr);
    in.returned[r] = static_cast<const uint8_t*>(returned.back().get());
  }
  const DeviceBuffer table = upload(slots);
  in.slots = static_cast<const uint32_t*>(table.get());
  DeviceBuffer out(in.tokens * kHidden, "combined");
  cuda_check(cudaMemset(out.get(), 0xa5, in.tokens * kHidden), "poison");
  combine_reduce(out.get(), in, 3, nullptr);
  auto check = [&](kernels::PatternCheck* r) { check_combined(out.get(), in, r, nullptr); };
  EXPECT_EQ(mismatches(check), 0u);
  flip_byte(static_cast<char*>(out.get()) + 17 * kHidden + 2);
  EXPECT_EQ(mismatches(check), 1u);
}

}  // namespace
