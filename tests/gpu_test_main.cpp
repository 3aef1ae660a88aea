// main() of every GPU test: skips visibly (exit 77, CTest "Skipped") where no GPU is visible,
// and where any test case skipped (Google Test's GTEST_SKIP passes otherwise): each skipped case
// is named with its reason, so that tests/run_on_gpus.py can tell a missing GPU from the rest.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "common/device_connections.hpp"

namespace {

// Counts the skipped cases and says why each was skipped, on a line of its own.
class SkipReporter : public testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const testing::TestInfo& info) override {
    const testing::TestResult& result = *info.result();
    if (!result.Skipped()) return;
    ++skipped_;
    std::string why;
    for (int i = 0; i < result.total_part_count(); ++i)
      if (result.GetTestPartResult(i).skipped()) why = result.GetTestPartResult(i).message();
    std::printf("SKIPPED: %s.%s: %s\n", info.test_suite_name(), info.name(), why.empty() ? "no reason given" : why.c_str());
  }
  int skipped() const { return skipped_; }

 private:
  int skipped_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  p2pbench::request_device_connections();
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA GPU visible (%s). GPU tests run on a GPU node: scripts/gpu-check.sh\n",
                err != cudaSuccess ? cudaGetErrorName(err) : "0 devices");
    return 77;
  }
  testing::InitGoogleTest(&argc, argv);
  auto* skips = new SkipReporter;  // owned by the listener list
  testing::UnitTest::GetInstance()->listeners().Append(skips);
  const int status = RUN_ALL_TESTS();
  if (status == 0 && skips->skipped() > 0) return 77;
  return status;
}
