// The pattern keys of the config: defaults, round trip, and every bad value named with its key.
#include <gtest/gtest.h>

#include "common/errors.hpp"
#include "config/config.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

json with(const json& extra) {
  json d = {{"sizes", {4096}}};
  d.update(extra);
  return d;
}

TEST(PatternConfig, DefaultsAreTheSequentialMatrix) {
  const Config c = parse_config(with(json::object()));
  EXPECT_EQ(c.plan.patterns, std::vector<Pattern>{Pattern::kMatrix});
  EXPECT_EQ(c.plan.matrix_schedule, Schedule::kSequential);
  EXPECT_EQ(c.plan.check_alone_pairs, 4u);
  EXPECT_EQ(c.plan.ring_shifts, std::vector<uint64_t>{1});
  EXPECT_EQ(c.plan.one_to_all_roots, std::vector<uint64_t>{0});
  EXPECT_TRUE(c.plan.flows.empty());
}

TEST(PatternConfig, ParsesAndRoundTrips) {
  const Config a = parse_config(with({{"patterns", {"matrix", "ring", "flows", "sampled"}},
                                      {"matrix", {{"schedule", "rounds"}, {"check_alone_pairs", 0}, {"seed", 9}}},
                                      {"sampled", {{"peers", 3}, {"seed", 5}}},
                                      {"ring", {{"shifts", {1, 2}}}},
                                      {"all_to_one", {{"roots", {1, 3}}}},
                                      {"flows", {{{0, 1}, {2, 3}}, {{3, 0}}}}}));
  EXPECT_EQ(a.plan.matrix_schedule, Schedule::kRounds);
  EXPECT_EQ(a.plan.check_alone_pairs, 0u);
  EXPECT_EQ(a.plan.sampled_peers, 3u);
  EXPECT_EQ(a.plan.all_to_one_roots, (std::vector<uint64_t>{1, 3}));
  ASSERT_EQ(a.plan.flows.size(), 2u);
  EXPECT_EQ(a.plan.flows[0], (std::vector<Flow>{{0, 1}, {2, 3}}));
  const Config b = parse_config(a.to_json());
  EXPECT_EQ(a.to_json(), b.to_json());
  EXPECT_EQ(a.to_json()["matrix"]["schedule"], "rounds");
}

struct Bad {
  const char* name;
  json doc;
  const char* key;
  const char* value;
};

class PatternConfigRejects : public ::testing::TestWithParam<Bad> {};

TEST_P(PatternConfigRejects, NamingKeyAndValue) {
  try {
    parse_config(with(GetParam().doc));
    FAIL() << GetParam().name << " was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(GetParam().key), std::string::npos) << msg;
    EXPECT_NE(msg.find(GetParam().value), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, PatternConfigRejects,
    ::testing::Values(
        Bad{"unknown pattern", {{"patterns", {"matrix", "star"}}}, "patterns[1]", "star"},
        Bad{"pattern twice", {{"patterns", {"ring", "ring"}}}, "patterns[1]", "twice"},
        Bad{"patterns empty", {{"patterns", json::array()}}, "patterns", "[]"},
        Bad{"patterns not a list", {{"patterns", "matrix"}}, "patterns", "matrix"},
        Bad{"bad schedule", {{"matrix", {{"schedule", "parallel"}}}}, "matrix.schedule", "parallel"},
        Bad{"alone_check is no schedule", {{"matrix", {{"schedule", "alone_check"}}}}, "matrix.schedule", "alone_check"},
        Bad{"negative alone pairs", {{"matrix", {{"check_alone_pairs", -1}}}}, "matrix.check_alone_pairs", "-1"},
        Bad{"seed text", {{"matrix", {{"seed", "x"}}}}, "matrix.seed", "x"},
        Bad{"unknown matrix key", {{"matrix", {{"rounds", 3}}}}, "matrix.rounds", "3"},
        Bad{"matrix not object", {{"matrix", 3}}, "matrix", "3"},
        Bad{"zero peers", {{"sampled", {{"peers", 0}}}}, "sampled.peers", "0"},
        Bad{"zero shift", {{"ring", {{"shifts", {1, 0}}}}}, "ring.shifts[1]", "0"},
        Bad{"shift twice", {{"ring", {{"shifts", {2, 2}}}}}, "ring.shifts[1]", "twice"},
        Bad{"negative root", {{"one_to_all", {{"roots", {-1}}}}}, "one_to_all.roots[0]", "-1"},
        Bad{"roots empty", {{"all_to_one", {{"roots", json::array()}}}}, "all_to_one.roots", "[]"},
        Bad{"flows not lists", {{"flows", {1, 2}}}, "flows[0]", "1"},
        Bad{"flow to itself", {{"flows", {{{0, 1}, {2, 2}}}}}, "flows[0][1]", "[2,2]"},
        Bad{"flow of three", {{"flows", {{{0, 1, 2}}}}}, "flows[0][0]", "[0,1,2]"},
        Bad{"flow twice", {{"flows", {{{0, 1}, {0, 1}}}}}, "flows[0][1]", "twice"},
        Bad{"negative rank", {{"flows", {{{0, -1}}}}}, "flows[0][0]", "-1"},
        Bad{"flows pattern without flows", {{"patterns", {"flows"}}}, "flows", "missing"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

TEST(PatternConfig, FlagOriginIsNamed) {
  try {
    parse_config(with({{"matrix", {{"schedule", "parallel"}}}}), {{"matrix.schedule", "--schedule"}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("matrix.schedule (from --schedule) = \"parallel\""), std::string::npos) << e.what();
  }
  try {
    parse_config(with({{"patterns", {"rings"}}}), {{"patterns", "--patterns"}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("patterns[0] (from --patterns)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace p2pbench
