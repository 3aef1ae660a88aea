// CPU tests of latency_read's variant axes: the "latency.read_*" config keys, their errors, and
// the cases and protocol names the sweep makes of them.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "results/result_writer.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

json reads(json latency) { return json{{"methods", {"latency_read"}}, {"latency", std::move(latency)}}; }

std::string rejection(const json& doc) {
  try {
    parse_config(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ReadChaseConfig, DefaultsAreTheMethodBeforeTheVariants) {
  const Config c = parse_config(json{{"methods", {"latency_read"}}});
  EXPECT_EQ(c.latency.read_loads, std::vector<uint64_t>{20000});
  EXPECT_EQ(c.latency.read_protocols, (std::vector<std::string>{"plain", "relaxed_sys", "absolute"}));
  EXPECT_EQ(c.latency.read_launch, std::vector<std::string>{"single"});
  EXPECT_EQ(c.latency.read_timing, std::vector<std::string>{"kernel_timer"});
  EXPECT_EQ(c.latency.read_owner, std::vector<std::string>{"idle"});
  EXPECT_EQ(c.latency.read_stride_bytes, std::vector<uint64_t>{128});
  EXPECT_EQ(c.latency.read_footprint_bytes, std::vector<uint64_t>{2u << 20});
  // The same six cases, with the same names, as before the variants existed.
  const auto cases = expand_cases(c);
  ASSERT_EQ(cases.size(), 6u);
  EXPECT_EQ(cases[0].name(), "latency_read/pull/uni/0->1/bytes:2097152/protocol:plain");
  EXPECT_EQ(cases[1].name(), "latency_read/pull/uni/1->0/bytes:2097152/protocol:plain");
  EXPECT_EQ(*cases[2].protocol, "relaxed_sys");
  EXPECT_EQ(*cases[4].protocol, "absolute");
  ASSERT_TRUE(cases[0].read_chase.has_value());
  EXPECT_EQ(cases[0].read_chase->loads, 20000u);
}

TEST(ReadChaseConfig, EveryKeyParsesAndRoundTrips) {
  const Config c = parse_config(reads({{"read_loads", {20000, 7575}},
                                       {"read_protocols", {"absolute"}},
                                       {"read_launch", {"single", "every_sm"}},
                                       {"read_timing", {"events"}},
                                       {"read_owner", {"idle", "busy"}},
                                       {"read_stride_bytes", {64, "256"}},
                                       {"read_footprint_bytes", {"1MiB", "2MiB"}}}));
  EXPECT_EQ(c.latency.read_loads, (std::vector<uint64_t>{20000, 7575}));
  EXPECT_EQ(c.latency.read_launch, (std::vector<std::string>{"single", "every_sm"}));
  EXPECT_EQ(c.latency.read_stride_bytes, (std::vector<uint64_t>{64, 256}));
  EXPECT_EQ(c.latency.read_footprint_bytes, (std::vector<uint64_t>{1u << 20, 2u << 20}));
  const Config again = parse_config(c.to_json());
  EXPECT_EQ(c.to_json(), again.to_json());
  // A single count is still accepted where a list now is (older configs).
  EXPECT_EQ(parse_config(reads({{"read_loads", 2000}})).latency.read_loads, std::vector<uint64_t>{2000});
}

TEST(ReadChaseConfig, OneCasePerCombinationEachNamedByItsVariant) {
  const Config c = parse_config(reads({{"read_loads", {20000, 7575}},
                                       {"read_protocols", {"plain", "absolute"}},
                                       {"read_launch", {"single", "every_sm"}},
                                       {"read_owner", {"idle", "busy"}},
                                       {"read_footprint_bytes", {"2MiB", "64KiB"}}}));
  const auto cases = expand_cases(c);
  ASSERT_EQ(cases.size(), 2u * 2 * 2 * 2 * 2 * 2);  // loads x loads kinds x launch x owner x footprint x orientation
  std::set<std::string> names;
  for (const CaseSpec& cs : cases) {
    names.insert(cs.name());
    ASSERT_TRUE(cs.read_chase.has_value());
    EXPECT_EQ(*cs.protocol, cs.read_chase->protocol());
    EXPECT_EQ(cs.direction, Direction::kPull);
  }
  EXPECT_EQ(names.size(), cases.size()) << "two variants share a case name";
  ReadChase r;
  r.load = "absolute";
  r.launch = "every_sm";
  r.timing = "events";
  r.owner = "busy";
  r.stride_bytes = 64;
  r.loads = 7575;
  EXPECT_EQ(r.protocol(), "absolute,launch=every_sm,timing=events,owner=busy,stride=64,loads=7575");
  EXPECT_EQ(ReadChase{}.protocol(), "relaxed_sys");
  int small = 0;
  for (const CaseSpec& cs : cases) small += cs.bytes == (64u << 10);
  EXPECT_EQ(small, 32);
}

TEST(ReadChaseConfig, BadValuesNameTheKeyAndTheValue) {
  struct Bad {
    json latency;
    const char* key;
    const char* value;
  };
  const Bad bad[] = {
      {{{"read_launch", {"single", "all_sms"}}}, "latency.read_launch[1]", "all_sms"},
      {{{"read_timing", {"cycles"}}}, "latency.read_timing[0]", "cycles"},
      {{{"read_owner", "busy"}}, "latency.read_owner", "busy"},
      {{{"read_protocols", {"generic", "weak"}}}, "latency.read_protocols[1]", "weak"},
      {{{"read_loads", {20000, 0}}}, "latency.read_loads[1]", "0"},
      {{{"read_loads", json::array()}}, "latency.read_loads", "[]"},
      {{{"read_stride_bytes", {12}}}, "latency.read_stride_bytes[0]", "12"},
      {{{"read_stride_bytes", {"2MiB"}}}, "latency.read_stride_bytes[0]", "2097152"},
      {{{"read_footprint_bytes", {64}}}, "latency.read_footprint_bytes[0]", "64"},
      {{{"read_footprint_bytes", {"8GiB"}}}, "latency.read_footprint_bytes[0]", "8589934592"},
      {{{"read_chain", "nvbandwidth"}}, "latency.read_chain", "nvbandwidth"},
  };
  for (const Bad& b : bad) {
    const std::string msg = rejection(reads(b.latency));
    EXPECT_NE(msg.find(b.key), std::string::npos) << b.latency.dump() << " -> " << msg;
    EXPECT_NE(msg.find(b.value), std::string::npos) << b.latency.dump() << " -> " << msg;
  }
}

// The row carries the variant and both timings; latency_us is the one `timing` names.
TEST(ReadChaseConfig, RowCarriesTheVariantAndBothTimings) {
  CaseSpec c;
  c.method = Method::kLatencyRead;
  c.direction = Direction::kPull;
  c.bytes = 2u << 20;
  ReadChase r;
  r.load = "absolute";
  r.launch = "every_sm";
  r.timing = "events";
  c.read_chase = r;
  c.protocol = r.protocol();
  CaseOutcome o;
  o.verified = true;
  o.latency_us = {0.830, 0.831, 0.829};  // the runner puts the events figure here for timing "events"
  o.cycles = {1640, 1641, 1639};
  o.latency_at_peak_clock_us = {0.828, 0.829, 0.827};
  ReadChaseSamples chase;
  chase.kernel_timer_us = {0.826, 0.828, 0.827};
  chase.events_us = o.latency_us;
  chase.grid_blocks = 132;
  chase.sm_ids = {0, 1};
  chase.per_sm_ns_per_load = {826.5, 827.5};
  chase.per_sm_launches = {3, 3};
  o.read_chase = chase;
  const json row = result_row(c, o);
  EXPECT_EQ(row["protocol"], "absolute,launch=every_sm,timing=events");
  EXPECT_EQ(row["read_chase"]["load"], "absolute");
  EXPECT_EQ(row["read_chase"]["launches_per_sample"], 132);
  EXPECT_EQ(row["read_chase"]["visited_bytes"], 2u << 20) << "20000 loads go round the 16384-element chain";
  EXPECT_EQ(row["read_chase"]["per_sm"]["launches"], json({3, 3}));
  EXPECT_DOUBLE_EQ(row["latency_us"]["median"].get<double>(), 0.830);
  EXPECT_DOUBLE_EQ(row["read_chase"]["events_us"]["median"].get<double>(), 0.830);
  EXPECT_DOUBLE_EQ(row["read_chase"]["kernel_timer_us"]["median"].get<double>(), 0.827);
  EXPECT_DOUBLE_EQ(row["read_chase"]["kernel_timer_us"]["min"].get<double>(), 0.826);
  o.status = CaseStatus::kFailed;
  EXPECT_FALSE(result_row(c, o).contains("read_chase"));
}

}  // namespace
}  // namespace p2pbench
