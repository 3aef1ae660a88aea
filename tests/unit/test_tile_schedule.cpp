// The GEMM -> reduce-scatter pipeline's tiles: sizes that split and those that do not, owners
// round-robin, tiles contiguous and covering D once.
#include <gtest/gtest.h>

#include <set>

#include "methods/gemm_rs/tile_schedule.hpp"

namespace p2pbench::gemm_rs {
namespace {

TEST(TileSchedule, SquareDInColumnTilesOwnedRoundRobin) {
  std::string why;
  const auto s = tile_schedule(uint64_t(4) * 4096 * 4096, 2048, 8, 3, why);  // 64 MiB of f32: m = n = 4096
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->m, 4096u);
  EXPECT_EQ(s->columns(), 512u);
  EXPECT_EQ(s->tile_elements(), 4096u * 512u);
  EXPECT_EQ(s->first_element(3), 3u * 4096u * 512u);
  EXPECT_EQ(s->owner(0), 0);
  EXPECT_EQ(s->owner(4), 1);
  EXPECT_EQ(s->owned_by(2), (std::vector<uint64_t>{2, 5}));
  EXPECT_DOUBLE_EQ(s->flops(), 2.0 * 4096 * 4096 * 2048);
  std::set<uint64_t> every;  // each tile exactly one owner, together all of D
  uint64_t elements = 0;
  for (int r = 0; r < 3; ++r)
    for (uint64_t t : s->owned_by(r)) {
      EXPECT_TRUE(every.insert(t).second);
      elements += s->tile_elements();
    }
  EXPECT_EQ(elements, s->m * s->n);
}

TEST(TileSchedule, RefusesWhatDoesNotSplitAndSaysWhy) {
  std::string why;
  EXPECT_FALSE(tile_schedule(4 * 1000 * 1000 + 4, 1024, 4, 2, why));  // not 4 m^2
  EXPECT_NE(why.find("square"), std::string::npos) << why;
  EXPECT_FALSE(tile_schedule(4 * 1000 * 1000, 1024, 4, 2, why));  // m = 1000: not a multiple of 16
  EXPECT_FALSE(tile_schedule(4 * 1024 * 1024, 1000, 4, 2, why));
  EXPECT_NE(why.find("gemm_k"), std::string::npos) << why;
  EXPECT_FALSE(tile_schedule(4 * 1024 * 1024, 1024, 128, 2, why));  // 8 columns a tile
  EXPECT_NE(why.find("tiles"), std::string::npos) << why;
  EXPECT_TRUE(tile_schedule(4 * 1024 * 1024, 1024, 64, 2, why));   // 16 columns a tile
}

}  // namespace
}  // namespace p2pbench::gemm_rs
