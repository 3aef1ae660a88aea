#include <gtest/gtest.h>

#include <set>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

TEST(Sweep, UniCasesComeInBothOrientationsBidirOnce) {
  const Config c = parse_config(json{{"sizes", {4096, 8192}}, {"methods", {"ce"}}, {"directions", {"push"}}});
  const auto cases = expand_cases(c);
  ASSERT_EQ(cases.size(), 2u * 2 + 2u);  // uni: 2 sizes x 2 orientations; bidir: 2 sizes
  EXPECT_EQ(cases[0].src_rank(), 0);
  EXPECT_EQ(cases[1].src_rank(), 1);
  EXPECT_EQ(cases[1].dst_rank(), 0);
  EXPECT_EQ(cases[4].mode, Mode::kBidir);
  EXPECT_EQ(cases[4].src_rank(), -1);
}

TEST(Sweep, AxesApplyPerMethod) {
  json doc = {{"sizes", {1 << 20}},
              {"methods", {"ce", "ldst", "tma"}},
              {"directions", {"push"}},
              {"modes", {"uni"}},
              {"ldst", {{"blocks", {1, 2}}, {"threads", {256, 512}}, {"unroll", {4}}}},
              {"tma", {{"blocks", {8}}, {"smem_bytes", {65536}}, {"stages", {2, 4, 8}}}}};
  const auto cases = expand_cases(parse_config(doc));
  size_t ce = 0, ldst = 0, tma = 0;
  for (const auto& c : cases) {
    if (c.method == Method::kCe) {
      ++ce;
      EXPECT_FALSE(c.blocks || c.threads || c.unroll || c.smem_bytes || c.stages);
    } else if (c.method == Method::kLdst) {
      ++ldst;
      EXPECT_TRUE(c.blocks && c.threads && c.unroll);
      EXPECT_FALSE(c.smem_bytes || c.stages);
    } else {
      ++tma;
      EXPECT_TRUE(c.blocks && c.smem_bytes && c.stages);
      EXPECT_FALSE(c.threads || c.unroll);
    }
  }
  EXPECT_EQ(ce, 2u);
  EXPECT_EQ(ldst, 2u * 2 * 2);
  EXPECT_EQ(tma, 3u * 2);
  std::set<std::string> names;
  for (const auto& c : cases) names.insert(c.name());
  EXPECT_EQ(names.size(), cases.size()) << "case names must be unique";
}

// The probes' named axes: the first outermost, latency_read's load kind fastest, every
// combination once per ordered pair, and the count from the same declaration.
TEST(Sweep, ProbeAxesExpandInTheirDeclaredOrder) {
  json doc = {{"sizes", {4096}},
              {"methods", {"latency_read", "atomic"}},
              {"latency", {{"read_footprint_bytes", {1 << 20, 2 << 20}},
                           {"read_launch", {"single", "every_sm"}},
                           {"read_protocols", {"plain", "absolute"}}}},
              {"atomic", {{"types", {"u32", "f32x4"}}, {"patterns", {"distinct", "hot_spot"}}, {"blocks", {4}}}}};
  const Config config = parse_config(doc);
  const auto cases = expand_cases(config);
  ASSERT_EQ(cases.size(), (2u * 2 * 2 + 2u * 2) * 2) << "every combination, both orientations";
  EXPECT_EQ(uint64_t(cases.size()), count_cases(config));
  // latency_read: footprint outermost, then launch, the load kind fastest; each for 0->1 then 1->0.
  const char* expected[] = {"plain", "plain", "absolute", "absolute", "plain,launch=every_sm", "plain,launch=every_sm"};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(*cases[i].protocol, expected[i]) << i;
  EXPECT_EQ(cases[0].bytes, 1u << 20);
  EXPECT_EQ(cases[8].bytes, 2u << 20);
  EXPECT_EQ(cases[1].src_rank(), 1);
  // atomic: bytes = blocks x threads x operations x the type's bytes; hot addresses only for hot_spot.
  const CaseSpec& f32x4_hot = cases[16 + 6];
  EXPECT_EQ(*f32x4_hot.atomic_type, "f32x4");
  EXPECT_EQ(*f32x4_hot.atomic_pattern, "hot_spot");
  EXPECT_EQ(f32x4_hot.bytes, 4u * 256 * 16 * 16);
  EXPECT_TRUE(f32x4_hot.hot_addresses.has_value());
  EXPECT_FALSE(cases[16].hot_addresses.has_value());
}

TEST(Sweep, HostLinkCasesRunOncePerGpu) {
  const Config c = parse_config(json{{"sizes", {4096}}, {"methods", {"h2d", "d2h"}}});  // push+pull, uni+bidir
  const auto cases = expand_cases(c);
  ASSERT_EQ(cases.size(), 4u);
  for (const auto& k : cases) {
    EXPECT_EQ(k.src_rank(), k.dst_rank());
    EXPECT_EQ(k.mode, Mode::kUni);
    EXPECT_EQ(k.direction, Direction::kPush);
  }
  EXPECT_EQ(cases[0].name(), "h2d/push/uni/0->0/bytes:4096");
  EXPECT_EQ(cases[3].name(), "d2h/push/uni/1->1/bytes:4096");
}

TEST(Sweep, OneRankRunsTheMethodsOfItsOwnGpuAndRefusesTheOthersByName) {
  const Config own = parse_config(json{{"sizes", {4096}}, {"methods", {"h2d", "d2d", "d2d_ldst"}}});
  const auto cases = expand_cases(own, GroupLayout::distinct(1));
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& k : cases) EXPECT_EQ(k.flows, (std::vector<Flow>{{0, 0}}));
  EXPECT_EQ(count_cases(own, GroupLayout::distinct(1)), 3u);
  EXPECT_EQ(expand_cases(own, GroupLayout::distinct(2)).size(), 6u);  // each rank its own GPU
  const Config mixed = parse_config(json{{"sizes", {4096}}, {"methods", {"d2d", "ce", "latency_read"}}});
  try {
    expand_cases(mixed, GroupLayout::distinct(1));
    FAIL() << "a P2P method planned for one rank";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ce, latency_read"), std::string::npos) << what;
    EXPECT_NE(what.find("configs/one-gpu.json"), std::string::npos) << what;
  }
  EXPECT_THROW(count_cases(mixed, GroupLayout::distinct(1)), InputError);
}

TEST(Sweep, StaticSkipForChunksThatAreNotSixteenByteMultiples) {
  CaseSpec c;
  c.method = Method::kTma;
  c.blocks = 8;
  c.smem_bytes = 65536;
  c.stages = 3;  // 21845.33 bytes per stage
  EXPECT_TRUE(static_skip_reason(c).has_value());
  c.stages = 4;
  EXPECT_FALSE(static_skip_reason(c).has_value());
  c.smem_bytes = 65536 + 8;  // 16386 per stage: not a multiple of 16
  EXPECT_TRUE(static_skip_reason(c).has_value());
}

TEST(Sweep, NameIsReadable) {
  CaseSpec c;
  c.method = Method::kTma;
  c.bytes = 1 << 30;
  c.blocks = 8;
  c.smem_bytes = 131072;
  c.stages = 4;
  EXPECT_EQ(c.name(), "tma/push/uni/0->1/bytes:1073741824/blocks:8/smem:131072/stages:4");
}

TEST(Sweep, EstimateGrowsWithSamples) {
  json doc = {{"sizes", {1 << 20, 1 << 30}}, {"samples", 10}};
  Config c = parse_config(doc);
  const auto e10 = estimate(c, expand_cases(c));
  doc["samples"] = 20;
  c = parse_config(doc);
  const auto e20 = estimate(c, expand_cases(c));
  EXPECT_GT(e20.seconds, e10.seconds);
  EXPECT_GT(e20.bytes_moved, e10.bytes_moved);
  EXPECT_EQ(e10.cases, 12u);  // 2 sizes x 2 directions x (2 uni orientations + 1 bidir)
}

// A transfer kernel sharing every SM with the GEMM waits for a GEMM launch per launch; with SMs
// of its own (a partition), on the copy engine, or beside the HBM stream it does not.
TEST(Sweep, EstimateWaitsForTheGemmOnlyWhereTheTransferSharesItsSms) {
  const Config c = parse_config(json{{"methods", {"interference"}},
                                     {"sizes", {"64MiB"}},
                                     {"directions", {"push"}},
                                     {"modes", {"uni"}},
                                     {"samples", 5},
                                     {"min_sample_time_ms", 200},  // phases of 256 transfers, the most
                                     {"interference", {{"engines", {"ce", "ldst"}}, {"sm_partitions", {0, 16}}}}});
  auto transfer_s = [&](Method engine, uint64_t partition, const std::string& workload) {
    for (const CaseSpec& k : expand_cases(c))
      if (k.engine == engine && k.sm_partition.value_or(0) == partition && k.workload == workload && k.flows.front().src_rank == 0)
        return estimate(c, {k}).transfer_seconds;
    ADD_FAILURE() << "no case of that shape";
    return 0.0;
  };
  const double gemm_launch_s = c.interference.gemm.flops() / (CaseCostModel{}.gemm_shared_tflops * 1e12);
  const double shared = transfer_s(Method::kLdst, 0, "gemm");
  EXPECT_GE(shared, 5 * double(kInterferenceMaxLaunches) * gemm_launch_s);
  EXPECT_LT(transfer_s(Method::kLdst, 16, "gemm"), shared / 2);
  EXPECT_LT(transfer_s(Method::kCe, 0, "gemm"), shared / 2);
  EXPECT_LT(transfer_s(Method::kLdst, 0, "hbm"), shared / 2);
}

}  // namespace
}  // namespace p2pbench
