// The put_signal protocol's arithmetic: which credit slot each chunk takes and what it refuses.
#include <gtest/gtest.h>

#include <set>

#include "methods/put_signal/put_signal_protocol.hpp"

namespace {

using p2pbench::put_signal::Geometry;

TEST(PutSignalProtocol, ChunksCoverTheTransfer) {
  EXPECT_EQ((Geometry{4096, 512, 4, 2}).chunks(), 8u);
  EXPECT_EQ((Geometry{4096 + 16, 512, 4, 2}).chunks(), 9u) << "a short last chunk";
  EXPECT_EQ((Geometry{16, 1 << 20, 4, 2}).chunks(), 1u);
  EXPECT_EQ((Geometry{4096 + 16, 512, 4, 2}).length_of(0), 512u);
  EXPECT_EQ((Geometry{4096 + 16, 512, 4, 2}).length_of(8), 16u) << "the short last chunk";
  EXPECT_EQ((Geometry{16, 1 << 20, 4, 2}).length_of(0), 16u);
}

TEST(PutSignalProtocol, InFlightChunksOfAChannelHoldDistinctSlots) {
  const Geometry g{1 << 20, 512, 3, 4};
  for (uint64_t first = 0; first + 4 * 3 <= g.chunks(); ++first) {
    std::set<uint32_t> slots;
    // Any `in_flight` consecutive chunks of one channel, and every channel's, are distinct slots.
    for (uint64_t k = first; k < first + 4 * 3; ++k) slots.insert(g.credit_slot(k));
    EXPECT_EQ(slots.size(), 12u) << "from chunk " << first;
  }
  for (uint64_t k = 0; k < g.chunks(); ++k) {
    EXPECT_LT(g.credit_slot(k), 12u);
    EXPECT_EQ(g.credit_slot(k) / 4, k % 3) << "a channel's slots are its own";
  }
}

TEST(PutSignalProtocol, RefusesWhatItCannotCarry) {
  EXPECT_FALSE((Geometry{1 << 20, 512, 128, 4}).unsupported_reason());
  EXPECT_NE((Geometry{1 << 20, 500, 1, 1}).unsupported_reason().value_or("").find("multiple of 16"), std::string::npos);
  EXPECT_NE((Geometry{1000, 512, 1, 1}).unsupported_reason().value_or("").find("1000 bytes"), std::string::npos);
  EXPECT_NE((Geometry{1 << 20, 512, 8192, 4}).unsupported_reason().value_or("").find("credits"), std::string::npos);
}

}  // namespace
