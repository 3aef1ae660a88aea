// The GEMM's checksum (kernels/workload_kernels.hpp) on one GPU: the device's sum of word i *
// (2i + 1) modulo 2^64 equals the host's, over sizes that leave blocks idle, fill one grid
// stride and wrap it many times, and two words swapped change it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "kernels/workload_kernels.hpp"

namespace p2pbench::kernels {
namespace {

std::vector<uint64_t> full_entropy_words(size_t n, uint64_t seed) {
  std::vector<uint64_t> words(n);
  uint64_t x = seed;
  for (uint64_t& w : words) {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    w = z ^ (z >> 31);
  }
  return words;
}

unsigned long long host_checksum(const std::vector<uint64_t>& words) {
  unsigned long long sum = 0;
  for (uint64_t i = 0; i < words.size(); ++i) sum += words[i] * (2 * i + 1);
  return sum;
}

unsigned long long device_checksum(const std::vector<uint64_t>& words) {
  DeviceBuffer data(words.size() * 8, "the checksum test's words");
  Stream stream = make_stream("the checksum test");
  cuda_check(cudaMemcpyAsync(data.get(), words.data(), words.size() * 8, cudaMemcpyHostToDevice, stream.get()),
             "copying the checksum test's words");
  return checksum_words(data.get(), words.size() * 8, stream.get(), "the checksum test's words");
}

TEST(ChecksumWords, EqualsTheHostSum) {
  // One word; fewer words than a block; one full stride of 1056 x 256; 64 MiB and a word.
  for (size_t n : {size_t(1), size_t(200), size_t(1056) * 256, (size_t(64) << 17) + 1}) {
    const std::vector<uint64_t> words = full_entropy_words(n, n);
    EXPECT_EQ(device_checksum(words), host_checksum(words)) << n << " words";
  }
}

TEST(ChecksumWords, SeesTwoWordsSwapped) {
  std::vector<uint64_t> words = full_entropy_words(size_t(1) << 20, 7);
  const unsigned long long before = device_checksum(words);
  ASSERT_NE(words[1000], words[700000]);
  std::swap(words[1000], words[700000]);
  EXPECT_NE(device_checksum(words), before);
  EXPECT_EQ(device_checksum(words), host_checksum(words));
}

}  // namespace
}  // namespace p2pbench::kernels
