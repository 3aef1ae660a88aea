// The host link's methods beyond h2d/d2h without a GPU: their registry entries and the cases the
// sweep makes of them (r -> r on each rank, one rank suffices). Their runs are GPU tests
// (tests/host_link/host_link_checks.py).
#include <gtest/gtest.h>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "plan/sweep.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

Method method_named(const char* name) {
  const auto m = parse_method(name);
  EXPECT_TRUE(m.has_value()) << name;
  return m.value_or(Method::kCe);
}

TEST(HostLinkMethods, RunOnTheRanksOwnGpuWithoutAPeerMapping) {
  for (const char* name : {"h2d_sm", "d2h_sm", "h2d_bidir", "d2h_bidir", "latency_host"}) {
    const Method m = method_named(name);
    EXPECT_TRUE(runs_on_own_gpu(m)) << name;
    EXPECT_FALSE(needs_peer_mapping(m)) << name;
  }
  EXPECT_TRUE(is_latency(Method::kLatencyHost));
  EXPECT_TRUE(chases_pointers(Method::kLatencyHost) && chases_pointers(Method::kLatencyRead));
  EXPECT_FALSE(runs_on_own_gpu(Method::kLatencyRead));  // the peer's memory: ordered pairs, as before
  EXPECT_EQ(axes_of(method_named("h2d_sm")), (std::vector<std::string>{"blocks", "threads", "unroll"}));
  EXPECT_TRUE(axes_of(method_named("h2d_bidir")).empty());
}

TEST(HostLinkMethods, SmCopiesDefaultToNvbandwidthsLaunchOncePerGpu) {
  const Config c = parse_config(json{{"sizes", {"512MiB"}}, {"methods", {"h2d_sm", "d2h_bidir"}}});  // push+pull, uni+bidir
  const auto cases = expand_cases(c, GroupLayout::distinct(2));
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(count_cases(c, GroupLayout::distinct(2)), 4u);
  for (const auto& k : cases) {
    EXPECT_EQ(k.src_rank(), k.dst_rank());
    EXPECT_EQ(k.mode, Mode::kUni);
    EXPECT_EQ(k.direction, Direction::kPush);
  }
  EXPECT_EQ(cases[0].name(), "h2d_sm/push/uni/0->0/bytes:536870912/blocks:132/threads:512/unroll:4");
  EXPECT_EQ(cases[3].name(), "d2h_bidir/push/uni/1->1/bytes:536870912");
}

TEST(HostLinkMethods, LatencyHostChasesOnEachRanksOwnGpu) {
  const json doc{{"methods", {"latency_host"}},
                 {"latency", {{"read_protocols", {"generic", "plain"}}, {"read_launch", {"every_sm"}}, {"read_loads", {7575}}}}};
  const Config c = parse_config(doc);
  const auto one = expand_cases(c, GroupLayout::distinct(1));
  ASSERT_EQ(one.size(), 2u);  // two protocols, one rank
  EXPECT_EQ(count_cases(c, GroupLayout::distinct(1)), 2u);
  for (const auto& k : one) {
    EXPECT_EQ(k.flows, (std::vector<Flow>{{0, 0}}));
    EXPECT_EQ(k.direction, Direction::kPull);
    ASSERT_TRUE(k.read_chase.has_value());
    EXPECT_EQ(k.read_chase->loads, 7575u);
    EXPECT_EQ(k.bytes, uint64_t{2} << 20);  // the chain's footprint: nvbandwidth's 2 MiB
  }
  const auto two = expand_cases(c, GroupLayout::distinct(2));
  ASSERT_EQ(two.size(), 4u);
  EXPECT_EQ(count_cases(c, GroupLayout::distinct(2)), 4u);
  EXPECT_EQ(two[0].flows, (std::vector<Flow>{{0, 0}}));
  EXPECT_EQ(two[1].flows, (std::vector<Flow>{{1, 1}}));
}

TEST(HostLinkMethods, OneRankRefusesPeerMethodsButNotTheHostChase) {
  const Config mixed = parse_config(json{{"sizes", {4096}}, {"methods", {"latency_host", "latency_read"}}});
  try {
    expand_cases(mixed, GroupLayout::distinct(1));
    FAIL() << "latency_read planned for one rank";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("latency_read"), std::string::npos) << what;
    EXPECT_NE(what.find("latency_host"), std::string::npos) << what;  // listed among what one rank runs
  }
}

}  // namespace
}  // namespace p2pbench
