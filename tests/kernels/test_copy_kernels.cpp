// GPU tests of the LD/ST and TMA copy kernels on one GPU (local buffers stand in for peer
// mappings: the kernels do not care). Every case checks every byte of the destination
// allocation: the target range equals the source, the guard bytes around it are untouched.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "kernels/copy_kernels.hpp"

namespace p2pbench::kernels {
namespace {

constexpr uint8_t kPoison = 0xA5;
// Guard bytes before and after the target range. A multiple of 256 keeps cudaMalloc's
// alignment, so the destination's offset alone sets its alignment.
constexpr size_t kGuard = 256;
constexpr size_t kMiB = size_t{1} << 20;

// Device memory owned by the test.
struct DeviceMem {
  void* ptr = nullptr;
  explicit DeviceMem(size_t bytes) { cuda_check(cudaMalloc(&ptr, bytes == 0 ? 1 : bytes), "allocating test memory"); }
  ~DeviceMem() { cudaFree(ptr); }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
  uint8_t* bytes() const { return static_cast<uint8_t*>(ptr); }
};

bool has_tma() {
  int major = 0;
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, current_device()),
             "querying the compute capability");
  return major >= 9;
}

// Pseudo-random bytes (splitmix64) that never equal the poison, so a byte the kernel failed
// to write can never pass for a copied one.
std::vector<uint8_t> pattern(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed;
  for (size_t i = 0; i < n; i += 8) {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (size_t k = 0; k < 8 && i + k < n; ++k) {
      const auto b = static_cast<uint8_t>(z >> (8 * k));
      v[i + k] = b == kPoison ? static_cast<uint8_t>(~b) : b;
    }
  }
  return v;
}

enum class Method { kLdst, kTma };

// blocks <= 0 means -blocks (or 1 when 0) times the SM count, resolved on the device.
struct CopyShape {
  Method method;
  int blocks;
  int threads_or_stages;  // ldst: threads; tma: stages
  int unroll;             // ldst only
  size_t smem_bytes;      // tma only
  size_t max_bytes;       // largest copy size this shape is run with
};

struct CopyCase {
  CopyShape shape;
  size_t bytes;
  size_t src_offset;
  size_t dst_offset;
};

int resolve_blocks(int blocks) { return blocks > 0 ? blocks : sm_count(current_device()) * std::max(1, -blocks); }

std::string blocks_name(int blocks) {
  if (blocks > 0) return std::to_string(blocks);
  return blocks == 0 || blocks == -1 ? "SM" : std::to_string(-blocks) + "xSM";
}

std::string case_name(const testing::TestParamInfo<CopyCase>& info) {
  const CopyCase& c = info.param;
  std::string name;
  if (c.shape.method == Method::kLdst) {
    name = "ldst_b" + blocks_name(c.shape.blocks) + "_t" + std::to_string(c.shape.threads_or_stages) + "_u" +
           std::to_string(c.shape.unroll);
  } else {
    name = "tma_b" + blocks_name(c.shape.blocks) + "_smem" + std::to_string(c.shape.smem_bytes) + "_s" +
           std::to_string(c.shape.threads_or_stages);
  }
  return name + "_n" + std::to_string(c.bytes) + "_src" + std::to_string(c.src_offset) + "_dst" +
         std::to_string(c.dst_offset);
}

std::vector<CopyShape> shapes() {
  const size_t all = 64 * kMiB;
  const size_t small = kMiB + 3;
  return {
      // LD/ST: blocks, threads, unroll.
      {Method::kLdst, 1, 32, 1, 0, all},
      {Method::kLdst, 3, 96, 2, 0, all},
      {Method::kLdst, 5, 64, 8, 0, all},
      {Method::kLdst, -1, 256, 4, 0, all},
      {Method::kLdst, -1, 1024, 8, 0, all},
      {Method::kLdst, -2, 512, 1, 0, all},
      // TMA: blocks, stages, smem. Chunks: 16 KiB (1 stage), 16000 B (3 stages, not a power of
      // two), 48 KiB, 25008 B, 16 B (the smallest possible), 16 KiB with more blocks than SMs.
      {Method::kTma, 1, 1, 0, 16384, all},
      {Method::kTma, 2, 3, 0, 48000, all},
      {Method::kTma, -1, 4, 0, 196608, all},
      {Method::kTma, -1, 8, 0, 200064, all},
      {Method::kTma, 7, 4, 0, 64, small},
      {Method::kTma, -2, 2, 0, 32768, all},
  };
}

std::vector<CopyCase> cases() {
  const std::vector<size_t> sizes = {0, 1, 15, 16, 17, 4097, kMiB + 3, 64 * kMiB};
  const std::vector<size_t> offsets = {0, 1, 3, 8, 15};
  // The largest size runs with fewer offset pairs (time): aligned, equally misaligned,
  // misaligned by different amounts (8 vs 0: 8-byte path; 3 vs 8; 15 vs 1: 2-byte path).
  const std::vector<std::pair<size_t, size_t>> large_offsets = {{0, 0}, {3, 3}, {8, 0}, {3, 8}, {15, 1}};
  std::vector<CopyCase> out;
  for (const CopyShape& shape : shapes()) {
    for (size_t bytes : sizes) {
      if (bytes > shape.max_bytes) continue;
      if (bytes >= 64 * kMiB) {
        for (auto [s, d] : large_offsets) out.push_back({shape, bytes, s, d});
        continue;
      }
      for (size_t s : offsets)
        for (size_t d : offsets) out.push_back({shape, bytes, s, d});
    }
  }
  return out;
}

class CopyKernelTest : public testing::TestWithParam<CopyCase> {};

TEST_P(CopyKernelTest, CopiesEveryByteAndNothingElse) {
  const CopyCase& c = GetParam();
  const int device = current_device();
  if (c.shape.method == Method::kTma && !has_tma()) GTEST_SKIP() << "TMA needs compute capability 9.0+";

  const size_t src_size = c.src_offset + c.bytes + kGuard;
  const size_t dst_size = kGuard + c.dst_offset + c.bytes + kGuard;
  const size_t dst_begin = kGuard + c.dst_offset;
  const std::vector<uint8_t> src_host = pattern(src_size, c.bytes * 131 + c.src_offset * 17 + c.dst_offset);

  DeviceMem src(src_size);
  DeviceMem dst(dst_size);
  cuda_check(cudaMemcpy(src.ptr, src_host.data(), src_size, cudaMemcpyHostToDevice), "uploading the source");
  cuda_check(cudaMemset(dst.ptr, kPoison, dst_size), "poisoning the destination");

  const int blocks = resolve_blocks(c.shape.blocks);
  if (c.shape.method == Method::kLdst) {
    const LdstShape shape{blocks, c.shape.threads_or_stages, c.shape.unroll};
    ASSERT_FALSE(ldst_unsupported_reason(shape, device).has_value());
    ldst_prepare(shape, device);
    ldst_copy(shape, src.bytes() + c.src_offset, dst.bytes() + dst_begin, c.bytes, nullptr);
  } else {
    const TmaShape shape{blocks, c.shape.smem_bytes, c.shape.threads_or_stages};
    const auto why = tma_unsupported_reason(shape, device);
    ASSERT_FALSE(why.has_value()) << *why;
    tma_prepare(shape, device);
    tma_copy(shape, src.bytes() + c.src_offset, dst.bytes() + dst_begin, c.bytes, nullptr);
  }
  cuda_check(cudaDeviceSynchronize(), "running the copy");

  std::vector<uint8_t> out(dst_size);
  cuda_check(cudaMemcpy(out.data(), dst.ptr, dst_size, cudaMemcpyDeviceToHost), "downloading the destination");

  for (size_t i = 0; i < dst_begin; ++i)
    ASSERT_EQ(out[i], kPoison) << "guard byte " << (dst_begin - i) << " before the range was written";
  if (std::memcmp(out.data() + dst_begin, src_host.data() + c.src_offset, c.bytes) != 0) {
    for (size_t i = 0; i < c.bytes; ++i)
      ASSERT_EQ(out[dst_begin + i], src_host[c.src_offset + i]) << "first wrong byte at offset " << i;
  }
  for (size_t i = dst_begin + c.bytes; i < dst_size; ++i)
    ASSERT_EQ(out[i], kPoison) << "guard byte " << (i - dst_begin - c.bytes) << " after the range was written";
}

INSTANTIATE_TEST_SUITE_P(Copies, CopyKernelTest, testing::ValuesIn(cases()), case_name);

// With one block per SM and every block busy on a large copy, `blocks` <= SM count blocks
// report `blocks` distinct SMs.
std::set<unsigned> smids_of_launch(Method method, int blocks) {
  const int device = current_device();
  const size_t bytes = 64 * kMiB;
  DeviceMem src(bytes);
  DeviceMem dst(bytes);
  DeviceMem smids(sizeof(unsigned) * static_cast<size_t>(blocks));
  cuda_check(cudaMemset(smids.ptr, 0xFF, sizeof(unsigned) * static_cast<size_t>(blocks)), "clearing the SM ids");
  auto* ids = static_cast<unsigned*>(smids.ptr);
  if (method == Method::kLdst) {
    const LdstShape shape{blocks, 256, 4};
    ldst_prepare(shape, device);
    ldst_copy(shape, src.ptr, dst.ptr, bytes, nullptr, ids);
  } else {
    // 64 KiB of stages: less than half an SM, so the one-block-per-SM padding is what counts.
    const TmaShape shape{blocks, 65536, 4};
    tma_prepare(shape, device);
    tma_copy(shape, src.ptr, dst.ptr, bytes, nullptr, ids);
  }
  cuda_check(cudaDeviceSynchronize(), "running the copy");
  std::vector<unsigned> host(static_cast<size_t>(blocks));
  cuda_check(cudaMemcpy(host.data(), ids, sizeof(unsigned) * host.size(), cudaMemcpyDeviceToHost),
             "downloading the SM ids");
  for (unsigned id : host) EXPECT_NE(id, 0xFFFFFFFFu) << "a block did not report its SM";
  return {host.begin(), host.end()};
}

TEST(CopyKernelSms, LdstUsesOneSmPerBlock) {
  for (int blocks : {1, std::min(7, sm_count(current_device())), sm_count(current_device())})
    EXPECT_EQ(smids_of_launch(Method::kLdst, blocks).size(), static_cast<size_t>(blocks)) << blocks << " blocks";
}

TEST(CopyKernelSms, TmaUsesOneSmPerBlock) {
  if (!has_tma()) GTEST_SKIP() << "TMA needs compute capability 9.0+";
  for (int blocks : {1, std::min(7, sm_count(current_device())), sm_count(current_device())})
    EXPECT_EQ(smids_of_launch(Method::kTma, blocks).size(), static_cast<size_t>(blocks)) << blocks << " blocks";
}

TEST(CopyKernelShapes, LdstRejectsBadShapes) {
  const int device = current_device();
  EXPECT_FALSE(ldst_unsupported_reason({4, 256, 4}, device).has_value());
  const std::vector<LdstShape> bad = {{4, 1025, 4}, {4, 0, 4},   {4, 48, 4},  {4, 2048, 1},
                                      {4, 256, 3},  {4, 256, 0}, {4, 256, 16}, {0, 256, 4}};
  for (const LdstShape& shape : bad) {
    const auto why = ldst_unsupported_reason(shape, device);
    ASSERT_TRUE(why.has_value()) << shape.blocks << "/" << shape.threads << "/" << shape.unroll;
    EXPECT_FALSE(why->empty());
  }
  EXPECT_ANY_THROW(ldst_prepare({4, 256, 3}, device));
}

TEST(CopyKernelShapes, TmaRejectsBadShapes) {
  const int device = current_device();
  const auto fine = tma_unsupported_reason({4, 65536, 4}, device);
  if (has_tma()) {
    EXPECT_FALSE(fine.has_value()) << *fine;
  } else {
    ASSERT_TRUE(fine.has_value());
    EXPECT_NE(fine->find("compute capability"), std::string::npos) << *fine;
  }
  const std::vector<std::pair<TmaShape, std::string>> bad = {
      {{4, 1000, 1}, "multiple of 16"},  // chunk 1000
      {{4, 1000, 2}, "multiple of 16"},  // chunk 500
      {{4, 32, 4}, "multiple of 16"},    // chunk 8
      {{4, 0, 1}, "multiple of 16"},     // chunk 0
      {{4, 65536, 0}, "stages"},
      {{0, 65536, 4}, "blocks"},
  };
  for (const auto& [shape, needle] : bad) {
    const auto why = tma_unsupported_reason(shape, device);
    ASSERT_TRUE(why.has_value()) << shape.blocks << "/" << shape.smem_bytes << "/" << shape.stages;
    EXPECT_NE(why->find(needle), std::string::npos) << *why;
  }
  // Far beyond any GPU's shared memory: refused as too large (or for the architecture).
  const auto huge = tma_unsupported_reason({4, size_t{1} << 30, 4}, device);
  ASSERT_TRUE(huge.has_value());
  if (has_tma()) {
    EXPECT_NE(huge->find("exceeds"), std::string::npos) << *huge;
  }
  // Just too large by the mbarriers.
  if (has_tma()) {
    int optin = 0;
    cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "querying optin");
    const size_t at_limit = static_cast<size_t>(optin) / 16 * 16;
    EXPECT_TRUE(tma_unsupported_reason({4, at_limit, 1}, device).has_value()) << "no room for the mbarrier";
    EXPECT_FALSE(tma_unsupported_reason({4, at_limit - 16, 1}, device).has_value());
  }
  EXPECT_ANY_THROW(tma_prepare({4, 1000, 1}, device));
}

}  // namespace
}  // namespace p2pbench::kernels
