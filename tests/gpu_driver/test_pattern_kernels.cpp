// The verification machinery must be able to fail: poison differs from the pattern in every
// byte, and a single wrong byte is reported at its offset.
#include <gtest/gtest.h>

#include <vector>

#include "common/cuda_raii.hpp"
#include "kernels/pattern_kernels.hpp"

namespace p2pbench {
namespace {

kernels::PatternCheck check(const void* data, size_t bytes, uint64_t seed, uint64_t offset) {
  MappedHostBuffer result(sizeof(kernels::PatternCheck), "test result");
  auto* r = static_cast<kernels::PatternCheck*>(result.host());
  *r = {0, ~0ull};
  kernels::check_pattern(data, bytes, seed, offset, static_cast<kernels::PatternCheck*>(result.device()), nullptr);
  cuda_check(cudaDeviceSynchronize(), "check");
  return *r;
}

TEST(PatternKernels, PatternPassesPoisonFailsEveryByte) {
  for (size_t bytes : {size_t(1), size_t(7), size_t(4097), size_t(1) << 20}) {
    DeviceBuffer buf(bytes, "test");
    kernels::fill_pattern(buf.get(), bytes, 42, 0, nullptr);
    EXPECT_EQ(check(buf.get(), bytes, 42, 0).mismatches, 0u) << bytes;
    EXPECT_EQ(check(buf.get(), bytes, 43, 0).mismatches > 0, true) << "another seed must not match";
    kernels::fill_poison(buf.get(), bytes, 42, 0, nullptr);
    const auto r = check(buf.get(), bytes, 42, 0);
    EXPECT_EQ(r.mismatches, bytes) << "poison must differ from the pattern in every byte";
    EXPECT_EQ(r.first_bad_offset, 0u);
  }
}

TEST(PatternKernels, FindsOneFlippedByteAtItsOffset) {
  const size_t bytes = (1 << 20) + 3;
  DeviceBuffer buf(bytes, "test");
  kernels::fill_pattern(buf.get(), bytes, 7, 4096, nullptr);
  cuda_check(cudaDeviceSynchronize(), "fill");
  for (size_t bad : {size_t(0), size_t(12345), bytes - 1}) {
    unsigned char byte = 0;
    char* p = static_cast<char*>(buf.get()) + bad;
    cuda_check(cudaMemcpy(&byte, p, 1, cudaMemcpyDeviceToHost), "read");
    byte ^= 0x10;
    cuda_check(cudaMemcpy(p, &byte, 1, cudaMemcpyHostToDevice), "corrupt");
    const auto r = check(buf.get(), bytes, 7, 4096);
    EXPECT_EQ(r.mismatches, 1u);
    EXPECT_EQ(r.first_bad_offset, bad);
    byte ^= 0x10;
    cuda_check(cudaMemcpy(p, &byte, 1, cudaMemcpyHostToDevice), "repair");
  }
}

TEST(PatternKernels, OffsetsLineUpAcrossRegions) {
  // Slot k of a pool is checked with pattern offset k * stride: a region copied to the same
  // offset elsewhere must verify, and at a different offset must not.
  const size_t bytes = 1 << 16;
  DeviceBuffer whole(4 * bytes, "pool"), slot(bytes, "slot");
  kernels::fill_pattern(whole.get(), 4 * bytes, 9, 0, nullptr);
  cuda_check(cudaMemcpy(slot.get(), static_cast<char*>(whole.get()) + 2 * bytes, bytes, cudaMemcpyDeviceToDevice), "copy");
  EXPECT_EQ(check(slot.get(), bytes, 9, 2 * bytes).mismatches, 0u);
  EXPECT_GT(check(slot.get(), bytes, 9, 1 * bytes).mismatches, 0u);
}

}  // namespace
}  // namespace p2pbench
