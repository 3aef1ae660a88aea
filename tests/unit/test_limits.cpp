// Input limits: nesting depth, case count, 64-bit buffer arithmetic, the kernels' shape limits,
// the built-in default config, and what the summary claims.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <string>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "example_results.hpp"
#include "results/summary.hpp"
#include "plan/sweep.hpp"
#include "source_dir.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

std::string nested(int levels, const std::string& inner = "1") {
  std::string text;
  for (int i = 0; i < levels; ++i) text += "{\"a\":";
  text += inner;
  for (int i = 0; i < levels; ++i) text += "}";
  return text;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigDepth, SixtyFourLevelsParseDeeperIsRefused) {
  EXPECT_NO_THROW(parse_json_text(nested(64), "--config", "\"x.json\""));
  const std::string why = error_of([] { parse_json_text(nested(65), "--config", "\"x.json\""); });
  EXPECT_NE(why.find("--config"), std::string::npos) << why;
  EXPECT_NE(why.find("nested deeper than 64"), std::string::npos) << why;
  // Far deeper (arrays too): refused the same way, no stack exhaustion.
  std::string deep(200000, '[');
  EXPECT_NE(error_of([&] { parse_json_text(deep + std::string(200000, ']'), "--config", "f"); }).find("deeper"),
            std::string::npos);
}

TEST(DefaultConfig, IsTheShippedFileAndValid) {
  const json built_in = default_config_document();
  const json on_disk = read_json_file(std::string(test_source_dir()) + "/configs/default.json", "--config");
  EXPECT_EQ(built_in, on_disk);
  const Config c = parse_config(built_in);
  EXPECT_EQ(c.label, "default");
  EXPECT_FALSE(expand_cases(c).empty());
}

TEST(CaseCount, AgreesWithTheExpansionForEveryShippedConfig) {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(test_source_dir()) + "/configs")) {
    const Config c = parse_config(read_json_file(entry.path().string(), "--config"));
    EXPECT_EQ(count_cases(c), expand_cases(c).size()) << entry.path();
  }
  // Every method at once, both modes and directions, several shapes.
  json doc = json::parse(R"({"sizes": [4096, 65536, 1048576], "modes": ["uni", "bidir"], "directions": ["pull", "push"],
      "methods": ["ce", "ldst", "tma", "h2d", "d2h", "staged", "nccl", "latency_signal", "latency_read",
                  "latency_ce", "atomic"],
      "ldst": {"blocks": [1, 2, 4], "threads": [256, 512]}, "tma": {"stages": [2, 4]},
      "atomic": {"blocks": [1, 2], "threads": [32, 64, 128]}})");
  const Config c = parse_config(doc);
  EXPECT_EQ(count_cases(c), expand_cases(c).size());
}

TEST(CaseCount, MoreThanTheLimitIsRefusedBeforeExpanding) {
  // 64 sizes x 65535 block counts x 1024 thread counts x 8 unrolls: far beyond memory if expanded.
  Config c = parse_config(json{{"sizes", {4096}}, {"methods", {"ldst"}}});
  c.sizes.assign(64, 4096);
  c.kernel_axes.set(Method::kLdst, ShapeAxis::kBlocks, std::vector<uint64_t>(65535, 1));
  c.kernel_axes.set(Method::kLdst, ShapeAxis::kThreads, std::vector<uint64_t>(1024, 32));
  EXPECT_GT(count_cases(c), kMaxCases);
  const std::string why = error_of([&] { check_case_count(c); });
  EXPECT_NE(why.find("more than the limit of 100000 cases"), std::string::npos) << why;
  c.kernel_axes.set(Method::kLdst, ShapeAxis::kBlocks, std::vector<uint64_t>(1, 1));
  c.kernel_axes.set(Method::kLdst, ShapeAxis::kThreads, std::vector<uint64_t>(1, 32));
  EXPECT_NO_THROW(check_case_count(c));  // 64 sizes x 2 orientations x 4 (dir x mode)
}

TEST(BufferArithmetic, SizesNear2To64AreRefusedNotWrapped) {
  EXPECT_EQ(buffer_slot_stride(1), 4096u);
  EXPECT_EQ(buffer_slot_stride(4096), 4096u);
  EXPECT_EQ(buffer_slot_stride(~0ull - 4094), std::nullopt);  // would round to 2^64 = 0
  EXPECT_EQ(buffer_slot_stride(~0ull - 4095), ~0ull - 4095);  // the largest whole slot
  Config c = parse_config(json{{"sizes", {"18446744073709551615"}}});
  const std::string why = error_of([&] { device_memory_need(c, expand_cases(c)); });
  EXPECT_NE(why.find("sizes"), std::string::npos) << why;
  EXPECT_NE(why.find("64 bits"), std::string::npos) << why;
  // Four buffers of 2^62 overflow too (two per rank, twice that on one GPU).
  c = parse_config(json{{"sizes", {"4194304T"}}});
  EXPECT_NE(error_of([&] { device_memory_need(c, expand_cases(c)); }).find("64 bits"), std::string::npos);
  // A pool beyond the sizes: named as the culprit, with its flag.
  c = parse_config(json{{"sizes", {4096}}, {"buffer_pool_bytes", "8000000T"}});
  const std::string pool = error_of([&] { device_memory_need(c, expand_cases(c), KeyOrigins{{"buffer_pool_bytes", "--buffer-pool"}}); });
  EXPECT_NE(pool.find("buffer_pool_bytes (from --buffer-pool)"), std::string::npos) << pool;
}

TEST(BufferArithmetic, NeedMatchesTheSessionsFormula) {
  Config c = parse_config(json{{"sizes", {1 << 30, 4095}}});
  const DeviceMemoryNeed need = device_memory_need(c, expand_cases(c));
  EXPECT_EQ(need.buffer_bytes, 1ull << 30);
  EXPECT_EQ(need.per_gpu_bytes, 2 * (1ull << 30) + (256ull << 20));
  c = parse_config(json{{"sizes", {4095}}, {"buffer_pool_bytes", "10001K"}});  // 2500 slots of 4 KiB
  EXPECT_EQ(device_memory_need(c, expand_cases(c)).buffer_bytes, 2500ull * 4096);
  c = parse_config(json{{"sizes", {4095}}, {"buffer_pool_bytes", "3000K"}});
  EXPECT_EQ(device_memory_need(c, expand_cases(c)).buffer_bytes, 4ull << 20);  // at least 4 MiB
  c = parse_config(json{{"sizes", {4097}}, {"buffer_pool_bytes", "64M"}});    // slots of 8 KiB
  EXPECT_EQ(device_memory_need(c, expand_cases(c)).buffer_bytes, 64ull << 20);
}

TEST(KernelAxes, ErrorsNameTheFlag) {
  KeyOrigins origins{{"ldst.threads", "--threads"}, {"tma.smem_bytes", "--smem"}, {"ldst.blocks", "--blocks"}};
  Config c = parse_config(json{{"sizes", {4096}}});
  c.kernel_axes.set(Method::kLdst, ShapeAxis::kThreads, std::vector<uint64_t>{1025});
  std::string why = error_of([&] { validate_kernel_axes(c, origins); });
  EXPECT_NE(why.find("ldst.threads[0] (from --threads) = 1025"), std::string::npos) << why;
  c.kernel_axes.set(Method::kLdst, ShapeAxis::kThreads, std::vector<uint64_t>{96});  // whole warps are fine
  EXPECT_NO_THROW(validate_kernel_axes(c, origins));
  c.kernel_axes.set(Method::kLdst, ShapeAxis::kThreads, std::vector<uint64_t>{100});
  EXPECT_NE(error_of([&] { validate_kernel_axes(c, origins); }).find("multiple of 32"), std::string::npos);
  c.kernel_axes.set(Method::kLdst, ShapeAxis::kThreads, std::vector<uint64_t>{512});
  c.kernel_axes.set(Method::kLdst, ShapeAxis::kBlocks, std::vector<uint64_t>{0});
  EXPECT_NE(error_of([&] { validate_kernel_axes(c, origins); }).find("(from --blocks)"), std::string::npos);
}

TEST(KernelAxes, TmaSharedMemoryAtMost227KiBWithItsBarriers) {
  Config c = parse_config(json{{"sizes", {4096}}});
  c.kernel_axes.set(Method::kTma, ShapeAxis::kStages, std::vector<uint64_t>{4});
  c.kernel_axes.set(Method::kTma, ShapeAxis::kSmemBytes, std::vector<uint64_t>{227 * 1024 - 32});  // + 4 stages x 8 bytes of mbarrier = 227 KiB exactly
  EXPECT_NO_THROW(validate_kernel_axes(c));
  c.kernel_axes.set(Method::kTma, ShapeAxis::kSmemBytes, std::vector<uint64_t>{227 * 1024 - 31});
  EXPECT_THROW(validate_kernel_axes(c), InputError);
  c.kernel_axes.set(Method::kTma, ShapeAxis::kSmemBytes, std::vector<uint64_t>{300 * 1024});
  const std::string why = error_of([&] { validate_kernel_axes(c, {{"tma.smem_bytes", "--smem"}}); });
  EXPECT_NE(why.find("tma.smem_bytes[0] (from --smem) = 307200"), std::string::npos) << why;
  EXPECT_NE(why.find("227 KiB"), std::string::npos) << why;
}

TEST(KernelAxes, AtomicThreadsAndBlocksTimesThreads) {
  Config c = parse_config(json{{"sizes", {4096}}});
  c.atomic.threads = {1025};
  EXPECT_NE(error_of([&] { validate_kernel_axes(c); }).find("atomic.threads[0] = 1025"), std::string::npos);
  c.atomic.threads = {1024};
  c.atomic.blocks = {2097152};  // x 1024 = 2^31: the kernel's limit, allowed
  EXPECT_NO_THROW(validate_kernel_axes(c));
  c.atomic.blocks = {2097153};
  EXPECT_NE(error_of([&] { validate_kernel_axes(c); }).find("blocks x threads"), std::string::npos);
  c.atomic.blocks = {1ull << 40};
  c.atomic.threads = {1};
  EXPECT_NE(error_of([&] { validate_kernel_axes(c); }).find("grid limit"), std::string::npos);
}

TEST(Summary, KneeOnlyWhereTheSmCountVaried) {
  using namespace p2pbench::testing;
  std::vector<CaseResult> cases;
  for (int blocks : {132, 132}) {
    CaseOutcome o = ok_outcome(370);
    o.sms_used = blocks;
    cases.push_back({spec(Method::kLdst, Direction::kPush, Mode::kUni, 1 << 30, blocks), o});
  }
  json summary = summarize_cases(cases, GroupFacts::of(GroupLayout::distinct(2)));
  EXPECT_TRUE(summary[0]["knee"].is_null());
  EXPECT_EQ(summary_heading(summary).find("knee"), std::string::npos);
  EXPECT_EQ(summary_lines(summary)[0].find("knee"), std::string::npos);
  CaseOutcome o = ok_outcome(360);
  o.sms_used = 16;
  cases.push_back({spec(Method::kLdst, Direction::kPush, Mode::kUni, 1 << 30, 16), o});
  summary = summarize_cases(cases, GroupFacts::of(GroupLayout::distinct(2)));
  EXPECT_EQ(summary[0]["knee"]["sms_used"], 16);
  EXPECT_NE(summary_heading(summary).find("knee"), std::string::npos);
}

// A copy within one GPU at 16 MiB reads and writes its L2 (32 MiB of an H200's 60): the best is
// the memory's figure from the sizes beyond it, or, where none ran, says it is the L2's.
TEST(Summary, ACopyWithinOneGpuIsBestBeyondItsL2) {
  using namespace p2pbench::testing;
  auto local_copy = [](uint64_t bytes, double gbps) {
    CaseSpec c = spec(*parse_method("d2d"), Direction::kPush, Mode::kUni, bytes);
    c.flows = {{0, 0}};
    return CaseResult{c, ok_outcome(gbps)};
  };
  GroupFacts facts = GroupFacts::of(GroupLayout::distinct(1));
  facts.l2_bytes = {uint64_t(60) << 20};
  const std::vector<CaseResult> cases = {local_copy(16 << 20, 2869), local_copy(64 << 20, 2090),
                                         local_copy(uint64_t(1) << 30, 2120)};
  json summary = summarize_cases(cases, facts);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0]["best"]["bytes"], uint64_t(1) << 30);
  EXPECT_EQ(summary[0]["best"]["fits_in_l2"], false);
  EXPECT_EQ(summary_lines(summary)[0].find("L2"), std::string::npos) << summary_lines(summary)[0];

  summary = summarize_cases({cases[0]}, facts);
  EXPECT_EQ(summary[0]["best"]["fits_in_l2"], true);
  EXPECT_NE(summary_lines(summary)[0].find("both buffers in the L2"), std::string::npos) << summary_lines(summary)[0];

  summary = summarize_cases(cases, GroupFacts::of(GroupLayout::distinct(1)));  // L2 not known: the fastest
  EXPECT_EQ(summary[0]["best"]["bytes"], 16 << 20);
  EXPECT_FALSE(summary[0]["best"].contains("fits_in_l2"));
}

TEST(Summary, TheBestGemmSaysItsTflops) {
  using namespace p2pbench::testing;
  const json summary = summarize_cases({gemm_case()}, GroupFacts::of(GroupLayout::distinct(1)));
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0]["best"]["own_figures"][0]["name"], "tflops");
  EXPECT_NEAR(summary[0]["best"]["own_figures"][0]["median"].get<double>(), 2.0 * 1024 * 1024 * 512 / 20e-6 / 1e12, 1e-9);
  EXPECT_NE(summary_lines(summary)[0].find(" GB/s; 53.7 TFLOP/s ("), std::string::npos) << summary_lines(summary)[0];
  const json ce = summarize_cases({{spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 30), ok_outcome(390)}},
                                  GroupFacts::of(GroupLayout::distinct(2)));
  EXPECT_FALSE(ce[0]["best"].contains("own_figures"));
}

TEST(Summary, SpeedupHeadingOnlyWithBaselines) {
  using namespace p2pbench::testing;
  std::vector<CaseResult> cases;
  cases.push_back({spec(Method::kCe, Direction::kPush, Mode::kUni, 1 << 30), ok_outcome(390)});
  json comparison = compare_methods(cases, GroupFacts::pair(std::nullopt));
  EXPECT_EQ(comparison_heading(comparison).find("speedup"), std::string::npos) << comparison_heading(comparison);
  cases.push_back({spec(Method::kNccl, Direction::kPush, Mode::kUni, 1 << 30), ok_outcome(300)});
  comparison = compare_methods(cases, GroupFacts::pair(std::nullopt));
  EXPECT_NE(comparison_heading(comparison).find("speedup over the baselines"), std::string::npos);
}

}  // namespace
}  // namespace p2pbench
