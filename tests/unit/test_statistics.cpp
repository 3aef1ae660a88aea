#include <gtest/gtest.h>

#include <stdexcept>

#include "stats/statistics.hpp"

namespace p2pbench {
namespace {

TEST(Statistics, SummaryOfKnownSamples) {
  const Summary s = summarize({4, 1, 3, 2, 10});
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 4);
  EXPECT_NEAR(s.stdev, 3.5355339, 1e-6);  // sample stdev of {1,2,3,4,10}
}

TEST(Statistics, EvenCountMedianInterpolates) {
  EXPECT_DOUBLE_EQ(summarize({1, 2, 3, 4}).median, 2.5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.95), 4.8);
  EXPECT_DOUBLE_EQ(summarize({7}).stdev, 0.0);
}

TEST(Statistics, EmptyIsAnError) { EXPECT_THROW(summarize({}), std::invalid_argument); }

TEST(Windows, FullOverlap) {
  const WindowPair p = combine({100, 200}, {100, 200});
  EXPECT_DOUBLE_EQ(p.union_ns, 100);
  EXPECT_DOUBLE_EQ(p.intersection_ns, 100);
  EXPECT_DOUBLE_EQ(p.overlap(), 1.0);
}

TEST(Windows, PartialOverlap) {
  const WindowPair p = combine({0, 100}, {50, 200});
  EXPECT_DOUBLE_EQ(p.union_ns, 200);
  EXPECT_DOUBLE_EQ(p.intersection_ns, 50);
  EXPECT_DOUBLE_EQ(p.overlap(), 0.25);
}

TEST(Windows, DisjointWindowsDoNotCountTheGap) {
  const WindowPair p = combine({0, 100}, {300, 350});
  EXPECT_DOUBLE_EQ(p.union_ns, 150);
  EXPECT_DOUBLE_EQ(p.intersection_ns, 0);
  EXPECT_DOUBLE_EQ(p.overlap(), 0.0);
}

TEST(Windows, NestedWindow) {
  const WindowPair p = combine({0, 1000}, {100, 200});
  EXPECT_DOUBLE_EQ(p.union_ns, 1000);
  EXPECT_DOUBLE_EQ(p.overlap(), 0.1);
}

TEST(Windows, RejectsReversedWindow) { EXPECT_THROW(combine({10, 5}, {0, 1}), std::invalid_argument); }

}  // namespace
}  // namespace p2pbench
