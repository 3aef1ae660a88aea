#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "engines/staging_layout.hpp"
#include "kernels/staging_kernels.hpp"

namespace p2pbench::staging {
namespace {

// Every region's flags, every fault record and every slot in its own place, for the node sizes
// the staged baseline meets (one rank alone on a node of the override, a pair, odd and full nodes).
class StagingLayoutOfNode : public ::testing::TestWithParam<uint32_t> {};

TEST_P(StagingLayoutOfNode, FlagsFaultsAndSlotsNeverShareALineOrOverlap) {
  Layout layout;
  layout.geometry.slots = 3;
  layout.geometry.lanes = 1;
  layout.geometry.chunk_bytes = 2 * kPageBytes;
  layout.regions = GetParam();
  ASSERT_NO_THROW(layout.validate());
  std::set<uint64_t> lines;
  for (uint32_t region = 0; region < layout.regions; ++region)
    for (uint32_t s = 0; s < layout.geometry.slots; ++s)
      for (uint32_t role = 0; role < 2; ++role) {
        const uint64_t offset = layout.flag_offset(region, s, role);
        EXPECT_EQ(offset % kLineBytes, 0u);
        EXPECT_TRUE(lines.insert(offset).second) << "flag " << region << "/" << s << "/" << role << " reused a line";
      }
  for (uint32_t region = 0; region < layout.regions; ++region) {
    const uint64_t offset = layout.fault_offset(region);
    EXPECT_EQ(offset % kLineBytes, 0u);
    EXPECT_TRUE(lines.insert(offset).second) << "fault record of region " << region << " reused a line";
    EXPECT_LE(offset + sizeof(kernels::StagingFault), layout.header_bytes());
  }
  EXPECT_EQ(lines.size(), size_t(layout.regions) * (2 * layout.geometry.slots + 1));
  EXPECT_EQ(layout.header_bytes() % kPageBytes, 0u);
  uint64_t expected = layout.header_bytes();
  for (uint32_t region = 0; region < layout.regions; ++region)
    for (uint32_t s = 0; s < layout.geometry.slots; ++s) {
      EXPECT_EQ(layout.slot_offset(region, s), expected) << "slot " << region << "/" << s;
      expected += layout.geometry.chunk_bytes;
    }
  EXPECT_EQ(layout.total_bytes(), expected);
  EXPECT_EQ(layout.total_bytes() - layout.header_bytes(),
            uint64_t(layout.regions) * layout.geometry.slots * layout.geometry.chunk_bytes);
}

INSTANTIATE_TEST_SUITE_P(NodeSizes, StagingLayoutOfNode, ::testing::Values(1u, 2u, 3u, 8u, 72u));

TEST(StagingLayout, DefaultGeometryOfAPairFitsASmallSharedMemoryFilesystem) {
  // Containers default to a 64 MiB /dev/shm: the staging area of two ranks (and the start
  // gate) must fit; a node of eight ranks needs a region each.
  EXPECT_LT(Layout{}.total_bytes(), 64ull << 20);
  EXPECT_NO_THROW(Geometry{}.validate());
  Layout eight;
  eight.regions = 8;
  EXPECT_EQ(eight.total_bytes() - eight.header_bytes(), 8 * uint64_t(kDefaultSlots) * kDefaultChunkBytes);
}

TEST(StagingLayout, RejectsUnusableGeometry) {
  EXPECT_THROW((Geometry{kDefaultChunkBytes, 0}.validate()), std::invalid_argument);
  EXPECT_THROW((Geometry{0, 4}.validate()), std::invalid_argument);
  EXPECT_THROW((Geometry{kPageBytes + 16, 4}.validate()), std::invalid_argument);
  EXPECT_THROW((Geometry{kPageBytes, 3, 2}.validate()), std::invalid_argument);  // slots must split over lanes
  EXPECT_THROW((Geometry{kPageBytes, 4, 0}.validate()), std::invalid_argument);
  EXPECT_THROW((Layout{Geometry{}, 0}.validate()), std::invalid_argument);  // a node has at least one rank
}

TEST(StagingPlan, EmptyTransferHasNoSteps) {
  uint64_t position = 5;
  for (const auto& lane : plan_transfer(0, Geometry{}, &position)) EXPECT_TRUE(lane.empty());
  EXPECT_EQ(position, 5u);
}

// Checks one lane's chain: alternating step/copy/.../step, each step signalling the chunk the
// lane just copied and waiting for the slot of its next one. Returns the lane's copies.
std::vector<Op> check_lane(const std::vector<Op>& ops, uint32_t lane, const Geometry& g) {
  std::vector<Op> copies;
  if (ops.empty()) return copies;
  EXPECT_EQ(ops.size() % 2, 1u);
  int last_copied_slot = -1;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i % 2 == 0) {
      EXPECT_EQ(ops[i].kind, Op::kStep) << i;
      EXPECT_EQ(ops[i].signal_slot, last_copied_slot) << "a step signals the chunk just copied";
      EXPECT_EQ(ops[i].wait_slot, i + 1 < ops.size() ? int(ops[i + 1].slot) : -1) << "and waits for the next one's slot";
    } else {
      EXPECT_EQ(ops[i].kind, Op::kCopy) << i;
      EXPECT_EQ(ops[i].slot % g.lanes, lane) << "a slot always belongs to the same lane";
      last_copied_slot = int(ops[i].slot);
      copies.push_back(ops[i]);
    }
  }
  return copies;
}

TEST(StagingPlan, LanesTogetherCoverEveryByteOnce) {
  const Geometry g{kPageBytes, 4, 2};
  uint64_t position = 0;
  const uint64_t bytes = 4 * kPageBytes + 100;  // 5 chunks, the last one short
  const auto lanes = plan_transfer(bytes, g, &position);
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_EQ(position, 5u);
  std::vector<Op> copies;
  for (uint32_t lane = 0; lane < 2; ++lane)
    for (const Op& c : check_lane(lanes[lane], lane, g)) copies.push_back(c);
  ASSERT_EQ(copies.size(), 5u);
  std::sort(copies.begin(), copies.end(), [](const Op& a, const Op& b) { return a.offset < b.offset; });
  uint64_t covered = 0;
  for (size_t i = 0; i < copies.size(); ++i) {
    EXPECT_EQ(copies[i].offset, covered);
    EXPECT_EQ(copies[i].slot, i % 4) << "chunk " << i << " goes around the ring";
    covered += copies[i].bytes;
  }
  EXPECT_EQ(covered, bytes);
  EXPECT_EQ(copies.back().bytes, 100u);
  EXPECT_EQ(lanes[0].size(), 7u);  // chunks 0, 2, 4
  EXPECT_EQ(lanes[1].size(), 5u);  // chunks 1, 3
}

TEST(StagingPlan, ConsecutiveTransfersContinueAroundTheRing) {
  const Geometry g{kPageBytes, 4, 2};
  uint64_t position = 0;
  plan_transfer(kPageBytes, g, &position);  // one chunk, slot 0, lane 0
  const auto second = plan_transfer(kPageBytes, g, &position);
  EXPECT_TRUE(second[0].empty());
  ASSERT_EQ(second[1].size(), 3u);
  EXPECT_EQ(second[1][1].slot, 1u);
  EXPECT_EQ(second[1][0].signal_slot, -1);  // a transfer's first step signals nothing of the previous one
  EXPECT_EQ(position, 2u);
}

TEST(StagingFlags, SenderNeedsTheSlotDrainedReceiverNeedsItFilled) {
  using kernels::kStagingReceiver;
  using kernels::kStagingSender;
  using kernels::staging_expected;
  using kernels::staging_flag;
  EXPECT_EQ(staging_flag(7, 3), (uint64_t(7) << 32) | 3u);
  // Sender filled the slot twice: it may fill again once the receiver drained it twice.
  EXPECT_EQ(staging_expected(7, 2, kStagingSender), staging_flag(7, 2));
  // Receiver drained it twice: it may drain again once the sender filled it a third time.
  EXPECT_EQ(staging_expected(7, 2, kStagingReceiver), staging_flag(7, 3));
  // A flag an earlier case left behind never matches.
  EXPECT_NE(staging_expected(8, 2, kStagingSender), staging_flag(7, 2));
}

}  // namespace
}  // namespace p2pbench::staging
