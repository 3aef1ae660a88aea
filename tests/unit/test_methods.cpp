// The method registry: one entry per Method, in the enum's order (method_info indexes by it),
// then those registered by src/methods/ (this test links them), names that parse back, and the
// properties the loops and the plan ask for.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "engines/engine_registry.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {
namespace {

TEST(MethodRegistry, OneEntryPerMethodInEnumThenReportOrder) {
  const auto& table = method_registry();
  const size_t built_in = size_t(Method::kNcclAllToAll) + 1;  // the enum's last
  ASSERT_GT(table.size(), built_in) << "the built-in methods, then src/methods/'s";
  std::set<std::string> names;
  std::set<int> orders;
  for (size_t i = 0; i < table.size(); ++i) {
    if (i < built_in) {
      EXPECT_EQ(static_cast<size_t>(table[i].id), i) << table[i].name;
    } else {  // an id of its own order key, whatever else is registered, and in that order
      EXPECT_EQ(table[i].id, registered_method_id(table[i].report_order)) << table[i].name;
      if (i > built_in) {
        EXPECT_LT(table[i - 1].report_order, table[i].report_order) << table[i].name;
      }
    }
    EXPECT_EQ(&method_info(table[i].id), &table[i]) << table[i].name;
    EXPECT_EQ(parse_method(table[i].name), table[i].id);
    EXPECT_TRUE(names.insert(table[i].name).second) << "two methods named " << table[i].name;
    EXPECT_TRUE(orders.insert(table[i].report_order).second) << table[i].name;
    EXPECT_NE(std::string(table[i].help), "") << table[i].name;
  }
  EXPECT_FALSE(parse_method("memcpy"));
}

TEST(MethodRegistry, KindsDecideTheLoopAndThePath) {
  EXPECT_TRUE(is_latency(Method::kLatencyRead));
  EXPECT_FALSE(is_latency(Method::kAtomic));
  EXPECT_TRUE(is_host_link(Method::kD2h));
  EXPECT_TRUE(is_two_sided_baseline(Method::kNccl));
  EXPECT_FALSE(needs_peer_mapping(Method::kStaged));
  EXPECT_TRUE(needs_peer_mapping(Method::kTma));
  EXPECT_EQ(axes_of(Method::kTma), (std::vector<std::string>{"blocks", "smem_bytes", "stages"}));
  EXPECT_EQ(axes_of(Method::kCe), std::vector<std::string>{});
}

TEST(MethodRegistry, ANameAndAnOrderAreTakenOnce) {
  const size_t before = method_registry().size();
  MethodInfo twin = method_info(kDefaultMethod);
  EXPECT_THROW(register_method(twin), std::logic_error) << "its name is taken";
  twin.name = "a_name_no_method_has";
  EXPECT_THROW(register_method(twin), std::logic_error) << "its report_order is taken";
  EXPECT_EQ(method_registry().size(), before) << "neither was registered";
}

// A load beside a latency case, or the transfer beside an interference workload, is any method
// the registry lets run as one: a one-sided copy the case loop makes an engine for.
TEST(MethodRegistry, WhatMayRunAsALoadIsAOneSidedCopyWithAnEngine) {
  size_t loads = 0;
  for (const MethodInfo& m : method_registry()) {
    if (!m.runs_as_load) continue;
    ++loads;
    EXPECT_EQ(m.kind, MethodKind::kCopy) << m.name;
    EXPECT_FALSE(runs_one_way(m.id)) << m.name;
    EXPECT_NE(engine_maker(m.id), nullptr) << m.name;
  }
  EXPECT_GT(loads, 0u);
  EXPECT_THROW(method_info(registered_method_id(100000)), std::out_of_range);
}

// The transfer beside an interference workload may also be a flow whose two ends both run, which
// the interference loop runs on both ranks: a put with signal (a copy method of its own engine),
// NCCL's send/receive (a baseline on the session's communicator), a copy-engine collective (no
// SM on either rank), NCCL's collective of the same operation, or one built from puts (its blocks
// in the transfer's SM group). One way; never a latency load: that loop runs one end only.
TEST(MethodRegistry, WhatRunsBesideAWorkloadWithBothEndsIsOneWayFlow) {
  size_t beside = 0, baselines = 0, collectives = 0, sm_collectives = 0;
  for (const MethodInfo& m : method_registry()) {
    if (!m.runs_beside_workload) continue;
    ++beside;
    EXPECT_FALSE(m.runs_as_load) << m.name;
    EXPECT_TRUE(may_run_beside_workload(m)) << m.name;
    EXPECT_TRUE(runs_one_way(m.id)) << m.name;
    if (m.kind == MethodKind::kTwoSidedBaseline) {
      ++baselines;
      EXPECT_TRUE(m.needs_nccl) << m.name << ": its engine comes from the session's communicator";
      continue;
    }
    if (m.kind == MethodKind::kCollective) {  // the copy engine's and NCCL's take no SM of ours
      ++collectives;
      sm_collectives += takes_sms(m.id) ? 1 : 0;
      EXPECT_TRUE(!takes_sms(m.id) || m.collective == Collective::kAllGather) << m.name << ": only the all-gathers of puts";
      EXPECT_TRUE(engine_maker(m.id) != nullptr || m.needs_nccl) << m.name;
      continue;
    }
    EXPECT_EQ(m.kind, MethodKind::kCopy) << m.name;
    EXPECT_TRUE(m.needs_both_ends_running) << m.name;
    EXPECT_NE(engine_maker(m.id), nullptr) << m.name;
  }
  EXPECT_GT(beside, baselines);
  EXPECT_EQ(baselines, 1u) << "nccl";
  EXPECT_EQ(collectives, 6u) << "all-gather and all-to-all of the copy engine and of NCCL, the all-gathers of puts";
  EXPECT_EQ(sm_collectives, 2u) << "all_gather_put, all_gather_tma";
}

TEST(MethodRegistry, RowsCarryTheAxesTheMethodSweeps) {
  for (const MethodInfo& m : method_registry()) {
    if (m.swept.empty()) continue;
    std::vector<std::string> swept;
    for (const SweptAxis& a : m.swept) swept.push_back(to_string(a.axis));
    EXPECT_EQ(axes_of(m.id), swept) << m.name;
  }
  // The host link is a cudaMemcpyAsync: its rows carry no kernel shape.
  EXPECT_TRUE(axes_of(Method::kH2d).empty());
  EXPECT_TRUE(axes_of(Method::kD2h).empty());
}

TEST(MethodRegistry, WhereAMethodMayRun) {
  EXPECT_EQ(method_list([](const MethodInfo& m) { return m.crosses_nodes; }),
            "nccl, nccl_reduce_scatter, nccl_all_gather, nccl_all_reduce, nccl_all_to_all");
  EXPECT_EQ(method_list([](const MethodInfo& m) { return m.needs_both_ends_running && m.id <= Method::kInterference; }),
            "latency_signal");
  // The put_signal methods: both ends' kernels wait for each other, and the sender writes.
  for (const char* name : {"put_signal_ldst", "put_signal_tma", "put_signal_ce"}) {
    const std::optional<Method> m = parse_method(name);
    ASSERT_TRUE(m) << name;
    EXPECT_TRUE(method_info(*m).needs_both_ends_running) << name;
    EXPECT_TRUE(runs_one_way(*m)) << name;
    EXPECT_TRUE(needs_peer_mapping(*m)) << name;
    EXPECT_NE(std::string(method_info(*m).sanitizer_skip), "") << name;
  }
}

}  // namespace
}  // namespace p2pbench
