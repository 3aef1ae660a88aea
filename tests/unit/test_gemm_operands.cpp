// The GEMM workload's operands (kernels/workload_kernels.hpp), on the host: the values the
// float64 reference uses, which the GPU test shows the GPU holds bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>

#include "engines/cublaslt_library.hpp"
#include "kernels/workload_kernels.hpp"

namespace p2pbench::kernels {
namespace {

TEST(GemmOperands, EighthsAreTheSeventeenMultiplesOfAnEighth) {
  std::set<float> seen;
  for (uint64_t i = 0; i < 100000; ++i) {
    const float v = operand_value(OperandKind::kEighths, 7, i);
    EXPECT_EQ(v * 8, std::round(v * 8)) << v;
    EXPECT_LE(std::fabs(v), 1.0f);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 17u);
}

// Full entropy: zero mean, unit variance, thousands of distinct bf16 values (2688 of 200,000)
// over a wide range of exponents, both signs; each value is exactly a bf16.
TEST(GemmOperands, GaussianAreFullEntropyBf16) {
  constexpr uint64_t kCount = 200000;
  double sum = 0, squares = 0;
  std::set<float> seen;
  float smallest = 1e9f, largest = 0;
  for (uint64_t i = 0; i < kCount; ++i) {
    const float v = operand_value(OperandKind::kGaussian, 7, i);
    ASSERT_EQ(bf16_float(bf16_bits(v)), v) << "not a bf16 value: " << v;
    sum += v;
    squares += double(v) * v;
    seen.insert(v);
    if (v != 0) smallest = std::fmin(smallest, std::fabs(v));
    largest = std::fmax(largest, std::fabs(v));
  }
  const double mean = sum / kCount, variance = squares / kCount - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(variance, 1.0, 0.02);
  EXPECT_GT(seen.size(), 2000u);  // about 128 mantissas x 2 signs per binade, 2^-10 .. 2^2
  EXPECT_LT(smallest, 1.0f / 1024);
  EXPECT_GT(largest, 3.0f);
  EXPECT_NE(operand_value(OperandKind::kGaussian, 7, 0), operand_value(OperandKind::kGaussian, 8, 0));
}

// Round to nearest, ties to even, as the GPU's conversion does.
TEST(GemmOperands, Bf16RoundsToNearestEven) {
  auto from_bits = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  };
  EXPECT_EQ(bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits(from_bits(0x3F808000u)), 0x3F80);  // a tie, the even one kept
  EXPECT_EQ(bf16_bits(from_bits(0x3F818000u)), 0x3F82);  // a tie, rounded up to even
  EXPECT_EQ(bf16_bits(from_bits(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_EQ(bf16_bits(from_bits(0xBF807FFFu)), 0xBF80);  // below the tie, negative
  EXPECT_EQ(bf16_float(0x4040), 3.0f);
}

// cuBLASLt is loaded at run time, not linked (engines/cublaslt_library.hpp): the toolkit's library
// is found, has every function the GEMM calls (cublaslt() throws naming one it lacks), and answers.
// Needs the CUDA Toolkit, not a GPU.
TEST(CublasLtLibrary, LoadsEveryFunctionTheGemmCalls) {
  const CublasLtApi& api = cublaslt();
  EXPECT_STREQ(api.GetStatusName(CUBLAS_STATUS_NOT_INITIALIZED), "CUBLAS_STATUS_NOT_INITIALIZED");
  EXPECT_EQ(&cublaslt(), &api) << "loaded once";
}

}  // namespace
}  // namespace p2pbench::kernels
