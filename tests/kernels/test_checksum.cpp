// The GEMM's checksum (kernels/workload_kernels.hpp) on one GPU: the device's sum of word i *
// (2i + 1) modulo 2^64 equals the host's, over sizes that leave blocks idle, fill one grid
// stride and wrap it many times, and two words swapped change it. A sum queued behind work that
// outlasts its deadline gives up, naming what it summed, and its result word outlives it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"
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

// The words on the device, and a stream ordered after their copy.
struct DeviceWords {
  DeviceBuffer data;
  Stream stream = make_stream("the checksum test");
  explicit DeviceWords(const std::vector<uint64_t>& words) : data(words.size() * 8, "the checksum test's words") {
    cuda_check(cudaMemcpyAsync(data.get(), words.data(), words.size() * 8, cudaMemcpyHostToDevice, stream.get()),
               "copying the checksum test's words");
  }
};

unsigned long long device_checksum(const std::vector<uint64_t>& words) {
  DeviceWords on_gpu(words);
  WordChecksum checksum;
  return checksum.sum(on_gpu.data.get(), words.size() * 8, on_gpu.stream.get(), "the checksum test's words");
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

// A kernel holding the stream for 2 s (the SM probe, one block) keeps the checksum queued past a
// deadline of 0.1 s: the sum throws, naming its words. Once the stream has run, the same object
// sums again, right: the queued kernel wrote a word that still existed.
TEST(ChecksumWords, GivesUpAtItsDeadlineAndKeepsItsWord) {
  const std::vector<uint64_t> words = full_entropy_words(size_t(1) << 16, 11);
  DeviceWords on_gpu(words);
  DeviceBuffer smid(sizeof(unsigned), "the probe's SM number");
  WordChecksum checksum;
  EXPECT_EQ(checksum.sum(on_gpu.data.get(), words.size() * 8, on_gpu.stream.get(), "the held words"), host_checksum(words));
  record_block_smids(static_cast<unsigned*>(smid.get()), 1, uint64_t(2e9), on_gpu.stream.get());
  try {
    checksum.sum(on_gpu.data.get(), words.size() * 8, on_gpu.stream.get(), "the held words", 0.1);
    ADD_FAILURE() << "the checksum returned while the stream was held";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("the checksum of the held words"), std::string::npos) << e.what();
  }
  wait_for_stream(on_gpu.stream.get(), 30.0, "the held stream");
  EXPECT_EQ(checksum.sum(on_gpu.data.get(), words.size() * 8, on_gpu.stream.get(), "the held words"), host_checksum(words));
}

}  // namespace
}  // namespace p2pbench::kernels
