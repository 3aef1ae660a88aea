// The copies that replace synchronous cudaMemcpy for a few words (common/bounded_copier.hpp):
// words go to a poisoned device buffer and come back whole, the staging grows for a larger copy
// after a smaller one, a typed read takes the value at its address, and an empty copy does nothing.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/bounded_copier.hpp"
#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"

namespace p2pbench {
namespace {

std::vector<uint32_t> words(size_t n, uint32_t seed) {
  std::vector<uint32_t> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = uint32_t(i * 2654435761u) ^ seed;
  return w;
}

TEST(BoundedCopier, WordsGoThereAndComeBackWhole) {
  BoundedCopier copier;
  DeviceBuffer device(4096 * sizeof(uint32_t), "the copied words");
  for (size_t n : {size_t(3), size_t(4096)}) {  // the second outgrows the first's staging
    cuda_check(cudaMemset(device.get(), 0xA5, device.size()), "poisoning the device words");
    // The poison is queued on the legacy stream, which the copier's stream does not wait for:
    // without this, a slow poison (seen under compute-sanitizer) lands over the copied words.
    cuda_check(cudaDeviceSynchronize(), "poisoning the device words");
    const std::vector<uint32_t> sent = words(n, uint32_t(n));
    copier.to_device(device.get(), sent.data(), n * sizeof(uint32_t), "the words");
    std::vector<uint32_t> back(n, 0x5A5A5A5Au);
    copier.to_host(back.data(), device.get(), n * sizeof(uint32_t), "the words");
    EXPECT_EQ(back, sent) << n << " words";
    if (n == 4096) continue;  // no word past the buffer's end to read
    const uint32_t past_end = copier.read(static_cast<const uint32_t*>(device.get()) + n, "the word past the end");
    EXPECT_EQ(past_end, 0xA5A5A5A5u) << "a copy of " << n << " words wrote past them";
  }
}

TEST(BoundedCopier, TypedReadTakesTheValueAtItsAddress) {
  struct Header {
    uint32_t timed_out;
    uint64_t chunk;
  };
  BoundedCopier copier;
  DeviceBuffer device(4 * sizeof(Header), "the headers");
  const Header third{1, 0x123456789ull};
  copier.to_device(static_cast<Header*>(device.get()) + 2, &third, sizeof third, "the third header");
  const Header got = copier.read(static_cast<const Header*>(device.get()) + 2, "the third header");
  EXPECT_EQ(got.timed_out, 1u);
  EXPECT_EQ(got.chunk, 0x123456789ull);
}

TEST(BoundedCopier, AnEmptyCopyDoesNothing) {
  BoundedCopier copier;
  uint32_t host = 7;
  copier.to_host(&host, nullptr, 0, "nothing");
  copier.to_device(nullptr, &host, 0, "nothing");
  EXPECT_EQ(host, 7u);
}

}  // namespace
}  // namespace p2pbench
