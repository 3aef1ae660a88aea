#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "config/config_keys.hpp"
#include "plan/sweep.hpp"
#include "source_dir.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

json minimal() { return json{{"sizes", json::array({4096})}}; }

TEST(Config, DefaultsAndOverrides) {
  Config c = parse_config(minimal());
  EXPECT_EQ(c.samples, 10);
  EXPECT_DOUBLE_EQ(c.min_sample_time_ms, 1.0);
  EXPECT_TRUE(c.verify);
  EXPECT_EQ(c.methods, std::vector<Method>{Method::kCe});
  json doc = minimal();
  doc["methods"] = {"ce", "ldst", "tma"};
  doc["ldst"] = {{"blocks", {{"min", 1}, {"max", 16}}}, {"unroll", {1, 8}}};
  doc["tma"] = {{"smem_bytes", {"64KiB", 131072}}};
  c = parse_config(doc);
  EXPECT_EQ(c.methods.size(), 3u);
  EXPECT_EQ(c.kernel_axes.of(Method::kLdst, ShapeAxis::kBlocks), (std::vector<uint64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(c.kernel_axes.of(Method::kLdst, ShapeAxis::kUnroll), (std::vector<uint64_t>{1, 8}));
  EXPECT_EQ(c.kernel_axes.of(Method::kTma, ShapeAxis::kSmemBytes), (std::vector<uint64_t>{65536, 131072}));
}

TEST(Config, LatencyOnlyConfigNeedsNoSizesAndRoundTrips) {
  // Rank 0 broadcasts its effective config; the other rank parses it again.
  const Config a = parse_config(json{{"methods", {"latency_signal", "atomic"}}});
  EXPECT_TRUE(a.sizes.empty());
  const Config b = parse_config(a.to_json());
  EXPECT_EQ(a.to_json(), b.to_json());
  EXPECT_THROW(parse_config(json{{"methods", {"ce", "latency_read"}}}), InputError);  // ce needs sizes
}

TEST(Config, EffectiveConfigRoundTrips) {
  json doc = minimal();
  doc["methods"] = {"ldst", "tma"};
  doc["label"] = "x";
  const Config a = parse_config(doc);
  const Config b = parse_config(a.to_json());
  EXPECT_EQ(a.to_json(), b.to_json());
}

struct BadInput {
  const char* name;
  json doc;
  const char* key;    // must appear in the message
  const char* value;  // must appear in the message
};

class ConfigRejects : public ::testing::TestWithParam<BadInput> {};

TEST_P(ConfigRejects, NamingKeyAndValue) {
  const BadInput& p = GetParam();
  try {
    Config c = parse_config(p.doc);
    validate_kernel_axes(c);
    FAIL() << p.name << " was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(p.key), std::string::npos) << msg;
    EXPECT_NE(msg.find(p.value), std::string::npos) << msg;
  }
}

json with(const char* key, json value) {
  json d = minimal();
  d[key] = std::move(value);
  return d;
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, ConfigRejects,
    ::testing::Values(BadInput{"unknown key", with("sampels", 3), "sampels", "3"},
                      BadInput{"samples wrong type", with("samples", "ten"), "samples", "\"ten\""},
                      BadInput{"zero samples", with("samples", 0), "samples", "0"},
                      BadInput{"fractional samples", with("samples", 2.5), "samples", "2.5"},
                      BadInput{"zero size", with("sizes", json::array({0})), "sizes[0]", "0"},
                      BadInput{"negative size", with("sizes", json::array({-4096})), "sizes[0]", "-4096"},
                      BadInput{"non-integer size", with("sizes", json::array({1.5})), "sizes[0]", "1.5"},
                      BadInput{"bad size text", with("sizes", json::array({"4 KB"})), "sizes[0]", "4 KB"},
                      BadInput{"missing sizes", json{{"samples", 3}}, "sizes", "missing"},
                      BadInput{"empty sizes", with("sizes", json::array()), "sizes", "[]"},
                      BadInput{"empty methods", with("methods", json::array()), "methods", "[]"},
                      BadInput{"unknown method", with("methods", json::array({"ce", "dma"})), "methods[1]", "dma"},
                      BadInput{"unknown direction", with("directions", json::array({"sideways"})), "directions[0]", "sideways"},
                      BadInput{"unknown mode", with("modes", json::array({"tri"})), "modes[0]", "tri"},
                      BadInput{"mode listed twice", with("modes", json::array({"uni", "bidir", "uni"})),
                               "modes[2] = \"uni\"", "listed twice"},
                      BadInput{"method listed twice", with("methods", json::array({"ce", "ce"})), "methods[1]",
                               "listed twice"},
                      BadInput{"min sample time 0", with("min_sample_time_ms", 0), "min_sample_time_ms", "0"},
                      BadInput{"verify not bool", with("verify", "yes"), "verify", "yes"},
                      BadInput{"threads 1025", with("ldst", json{{"threads", {1025}}}), "ldst.threads[0]", "1025"},
                      BadInput{"unroll 3", with("ldst", json{{"unroll", {3}}}), "ldst.unroll[0]", "3"},
                      BadInput{"unknown ldst key", with("ldst", json{{"warps", {3}}}), "ldst.warps", "3"},
                      BadInput{"claims past 65536", with("all_gather_put", json{{"claim_pieces", {70000}}}),
                               "all_gather_put.claim_pieces[0] = 70000", "claim_pieces must be 0..65536"},
                      BadInput{"claims where none are taken", with("reduce_scatter_two_shot", json{{"claim_pieces", {4}}}),
                               "reduce_scatter_two_shot.claim_pieces", "[4]"},
                      BadInput{"range max below min", with("sizes", json{{"min", "1M"}, {"max", "4K"}}), "sizes", "min"},
                      BadInput{"config not object", json::array({1}), "config", "1"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

// A typo names what was probably meant, before the list of every name.
TEST(Config, ATypoNamesTheClosestName) {
  auto error_for = [](const json& doc) {
    try {
      parse_config(doc);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error_for(with("samplez", 3)).find("unknown key (did you mean \"sampled\" or \"samples\"? known keys: "), std::string::npos);
  EXPECT_NE(error_for(with("methods", json::array({"ldts"}))).find("did you mean \"ldst\"? expected one of \"ce\""),
            std::string::npos);
  EXPECT_NE(error_for(with("directions", json::array({"pul"}))).find("did you mean \"pull\"?"), std::string::npos);
  const std::string far = error_for(with("methods", json::array({"rdma"})));
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
  EXPECT_NE(far.find("expected one of"), std::string::npos) << far;
}

TEST(Config, ClosestNamesAreWithinAThirdOfTheirLength) {
  using Names = std::vector<std::string>;
  const Names names = {"sampled", "samples", "sizes", "methods", "warmup_time_ms"};
  EXPECT_EQ(closest_names("sampels", names), Names{"samples"});  // two neighbours swapped: one edit
  EXPECT_EQ(closest_names("samplez", names), (Names{"sampled", "samples"}));  // a tie: both
  EXPECT_EQ(closest_names("warmup_ms", names), Names{});  // five edits from warmup_time_ms
  EXPECT_EQ(closest_names("warmup_tim_ms", names), Names{"warmup_time_ms"});
  EXPECT_EQ(closest_names("size", names), Names{"sizes"});
  EXPECT_EQ(closest_names("x", names), Names{});
  EXPECT_EQ(closest_names("", names), Names{});
}

TEST(Config, FlagOriginIsNamed) {
  KeyOrigins origins{{"samples", "--samples"}};
  try {
    parse_config(with("samples", 0), origins);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--samples"), std::string::npos) << e.what();
  }
}

// An element of a list set by a flag is named with its index, then the flag.
TEST(Config, FlagOriginFollowsTheIndex) {
  KeyOrigins origins{{"directions", "--directions"}};
  try {
    parse_config(with("directions", json::array({"push", "push"})), origins);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("directions[1] (from --directions) = \"push\": listed twice"), std::string::npos)
        << e.what();
  }
}

TEST(Config, ReadJsonFileErrors) {
  EXPECT_THROW(read_json_file("/nonexistent/p2pbench.json", "--config"), InputError);
  const std::string path = ::testing::TempDir() + "/bad.json";
  std::ofstream(path) << "{\"sizes\": [1,}";
  try {
    read_json_file(path, "--config");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid JSON"), std::string::npos);
  }
}

// meta.config: the sections of the methods the run uses (its interference engines and its latency
// load included), none of the others.
TEST(Config, RecordsTheSectionsOfTheMethodsItUses) {
  json doc = {{"methods", {"ce"}}, {"sizes", {"1MiB"}}, {"ldst", {{"blocks", {8}}}}, {"host", {{"numa", {"local"}}}}};
  json out = parse_config(doc).to_json();
  for (const char* unused : {"latency", "atomic", "interference", "host", "gds", "ldst", "tma"})
    EXPECT_FALSE(out.contains(unused)) << unused;
  EXPECT_TRUE(out.contains("samples") && out.contains("matrix")) << "the keys every run reads";
  doc["methods"] = {"interference", "latency_signal"};
  doc["interference"] = {{"engines", {"ldst"}}};
  doc["latency"] = {{"load", {{"method", "tma"}}}};
  out = parse_config(doc).to_json();
  EXPECT_EQ(out["ldst"]["blocks"], json({8})) << "the interference engine's section";
  EXPECT_TRUE(out.contains("tma")) << "the latency load's section";
  EXPECT_EQ(out["interference"]["engines"], json({"ldst"}));
  EXPECT_EQ(out["latency"]["load"]["method"], "tma");
  for (const char* unused : {"atomic", "host", "gds", "ce"}) EXPECT_FALSE(out.contains(unused)) << unused;
}

// Every config shipped in configs/, whatever its name: a new one is checked without a list to edit.
TEST(Config, ShippedConfigsAreValid) {
  size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(test_source_dir()) + "/configs")) {
    if (entry.path().extension() != ".json") continue;
    const std::string path = entry.path().string();
    SCOPED_TRACE(path);
    const Config c = parse_config(read_json_file(path, "--config"));
    validate_kernel_axes(c);
    EXPECT_FALSE(expand_cases(c).empty());
    ++checked;
  }
  EXPECT_GE(checked, 20u) << "configs/ holds the shipped configs";
}

}  // namespace
}  // namespace p2pbench
