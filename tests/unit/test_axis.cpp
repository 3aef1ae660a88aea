#include <gtest/gtest.h>

#include "common/errors.hpp"
#include "config/axis.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

TEST(ParseSize, AcceptsBytesAndBinarySuffixes) {
  EXPECT_EQ(parse_size_text("4096", "sizes"), 4096u);
  EXPECT_EQ(parse_size_text("64K", "sizes"), 65536u);
  EXPECT_EQ(parse_size_text("64KiB", "sizes"), 65536u);
  EXPECT_EQ(parse_size_text("3M", "sizes"), 3u << 20);
  EXPECT_EQ(parse_size_text("1GiB", "sizes"), 1ull << 30);
  EXPECT_EQ(parse_size(json(17), "sizes"), 17u);
}

TEST(ParseSize, SuffixesInAnyCase) {
  EXPECT_EQ(parse_size_text("64k", "sizes"), 65536u);
  EXPECT_EQ(parse_size_text("1g", "sizes"), 1ull << 30);
  EXPECT_EQ(parse_size_text("4KiB", "sizes"), 4096u);
  EXPECT_EQ(parse_size_text("4kib", "sizes"), 4096u);
  EXPECT_EQ(parse_size_text("4KIB", "sizes"), 4096u);
  EXPECT_EQ(parse_size_text("1M", "sizes"), 1u << 20);
  EXPECT_EQ(parse_size_text("1mib", "sizes"), 1u << 20);
  EXPECT_EQ(parse_size_text("2GiB", "sizes"), 2ull << 30);
  EXPECT_EQ(parse_size_text("2t", "sizes"), 2ull << 40);
  EXPECT_EQ(parse_size_text("4095", "sizes"), 4095u);  // plain numbers are bytes
  EXPECT_EQ(parse_size_text("18446744073709551615", "sizes"), ~0ull);
}

TEST(ParseSize, OverflowIsAnErrorNamingTheKey) {
  for (const char* bad : {"17179869185G", "16777216T", "18446744073709551616", "99999999999999999999999", "17179869184g"}) {
    try {
      parse_size_text(bad, "tma.smem_bytes[1]");
      FAIL() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "tma.smem_bytes[1]");
      EXPECT_NE(std::string(e.what()).find("64 bits"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parse_size_text("17179869183G", "sizes"), 17179869183ull << 30);  // the largest that fits
}

TEST(ParseSize, RejectsNonSizesNamingTheKey) {
  for (const json& bad : {json(0), json(-5), json(1.5), json("1.5M"), json("12MB"), json("abc"), json(""), json(true)}) {
    try {
      parse_size(bad, "sizes[3]");
      FAIL() << "accepted " << bad.dump();
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "sizes[3]");
      EXPECT_NE(std::string(e.what()).find("sizes[3]"), std::string::npos);
    }
  }
}

TEST(FormatSize, UsesTheLargestExactBinaryUnit) {
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(1 << 20), "1 MiB");
  EXPECT_EQ(format_size((1 << 20) + (1 << 19)), "1536 KiB");
  EXPECT_EQ(format_size(1ull << 30), "1 GiB");
  EXPECT_EQ(format_size(4095), "4095 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(4097), "4097 B");
  EXPECT_EQ(format_size((1ull << 30) + 1), "1073741825 B");
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1ull << 62), "4 EiB");
}

TEST(ParseAxis, ListRangeAndFactor) {
  EXPECT_EQ(parse_axis(json::array({1, 2, 8}), "blocks", false), (std::vector<uint64_t>{1, 2, 8}));
  EXPECT_EQ(parse_axis(json{{"min", 1}, {"max", 132}}, "blocks", false),
            (std::vector<uint64_t>{1, 2, 4, 8, 16, 32, 64, 128, 132}));  // the end is included
  EXPECT_EQ(parse_axis(json{{"min", 1}, {"max", 128}}, "blocks", false),
            (std::vector<uint64_t>{1, 2, 4, 8, 16, 32, 64, 128}));  // ... once
  EXPECT_EQ(parse_axis(json{{"min", "4K"}, {"max", "100K"}, {"factor", 4}}, "sizes", true),
            (std::vector<uint64_t>{4096, 16384, 65536, 102400}));
  EXPECT_EQ(parse_axis(json{{"min", 7}, {"max", 7}}, "blocks", false), (std::vector<uint64_t>{7}));
  // No wrap-around at the top of the 64-bit range.
  EXPECT_EQ(geometric_range(1ull << 63, ~0ull, 2, "sizes"), (std::vector<uint64_t>{1ull << 63, ~0ull}));
  EXPECT_EQ(parse_axis(json{{"min", "4K"}, {"max", "1M"}, {"factor", 4}}, "sizes", true),
            (std::vector<uint64_t>{4096, 16384, 65536, 262144, 1048576}));
  EXPECT_EQ(parse_axis(json(8), "blocks", false), (std::vector<uint64_t>{8}));
}

TEST(ParseAxis, RejectsBadRanges) {
  EXPECT_THROW(parse_axis(json::array(), "blocks", false), InputError);
  EXPECT_THROW(parse_axis(json{{"min", 8}, {"max", 2}}, "blocks", false), InputError);
  EXPECT_THROW(parse_axis(json{{"min", 1}}, "blocks", false), InputError);
  EXPECT_THROW(parse_axis(json{{"min", 1}, {"max", 4}, {"factor", 1}}, "blocks", false), InputError);
  EXPECT_THROW(parse_axis(json{{"min", 1}, {"max", 4}, {"step", 2}}, "blocks", false), InputError);
  EXPECT_THROW(parse_axis(json::array({1, -2}), "blocks", false), InputError);
  EXPECT_THROW(parse_axis(json::array({0, 2}), "blocks", false), InputError);
}

TEST(ParseAxis, ZeroOnlyWhereTheAxisHasIt) {
  EXPECT_EQ(parse_axis(json::array({0, 100}), "routing_skew", false, true), (std::vector<uint64_t>{0, 100}));
  EXPECT_THROW(parse_axis(json::array({0, -1}), "routing_skew", false, true), InputError);
  // A geometric range cannot start at 0: it would never grow.
  EXPECT_THROW(parse_axis(json{{"min", 0}, {"max", 100}}, "routing_skew", false, true), InputError);
}

TEST(AxisFlag, ListAndRangeSyntax) {
  EXPECT_EQ(axis_flag_to_json("1,2,4", "--blocks"), json::array({1, 2, 4}));
  EXPECT_EQ(axis_flag_to_json("1..132", "--blocks"), (json{{"min", 1}, {"max", 132}}));
  EXPECT_EQ(axis_flag_to_json("4K..1G:4", "--sizes"), (json{{"min", "4K"}, {"max", "1G"}, {"factor", 4}}));
  EXPECT_THROW(axis_flag_to_json("", "--blocks"), InputError);
}

}  // namespace
}  // namespace p2pbench
