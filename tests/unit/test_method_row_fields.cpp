// The fields methods declare for their rows (results/method_row_fields.hpp): each name declared
// one way, none a field every row has, a kind's fields on every method of the kind, identity
// fields on every row (null where the method has none) and a method's other fields on its rows
// alone.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "results/method_row_fields.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

std::set<std::string> names_of(const std::vector<RowField>& fields) {
  std::set<std::string> names;
  for (const RowField& f : fields) names.insert(f.name);
  return names;
}

CaseOutcome measured() {
  CaseOutcome o;
  o.verified = true;
  o.iterations = 1;
  o.gbps = {100, 110};
  o.time_us = {10, 9};
  return o;
}

TEST(MethodRowFields, EachDeclaredOnceAndNoneAFieldOfEveryRow) {
  const std::vector<DeclaredRowField> fields = declared_row_fields();
  ASSERT_FALSE(fields.empty());
  CaseSpec ce;  // a method that declares none
  ASSERT_TRUE(row_fields_of(ce.method).empty());
  const json row = result_row(ce, measured());
  for (const DeclaredRowField& d : fields) {
    EXPECT_FALSE(d.methods.empty()) << d.field.name;
    EXPECT_NE(d.field.description, "") << d.field.name;
    if (d.field.identity) {
      EXPECT_TRUE(row.contains(d.field.name) && row[d.field.name].is_null()) << d.field.name << " on every row";
      EXPECT_TRUE(d.field.nullable) << d.field.name << ": null on other methods' rows";
    } else {
      EXPECT_FALSE(row.contains(d.field.name)) << d.field.name << " is a field of every row";
    }
    EXPECT_EQ(declaration_json(d.field)["name"], d.field.name);
  }
}

TEST(MethodRowFields, AKindsFieldsAreOnEveryMethodOfTheKind) {
  for (const MethodInfo& m : method_registry()) {
    const std::set<std::string> names = names_of(row_fields_of(m.id));
    EXPECT_EQ(names.count("host_memory") == 1, m.kind == MethodKind::kHostLink) << m.name;
    EXPECT_EQ(names.count("collective") == 1, m.kind == MethodKind::kCollective) << m.name;
  }
}

TEST(MethodRowFields, IdentityDefaultsAreTheMethodsOwn) {
  EXPECT_EQ(identity_default(Method::kH2d, "host_memory"), "pinned");
  EXPECT_EQ(identity_default(Method::kD2h, "host_numa"), "local");
  EXPECT_TRUE(identity_default(Method::kCe, "host_memory").is_null());
  EXPECT_TRUE(identity_default(Method::kH2d, "numa_node").is_null()) << "not an identity field";
}

TEST(MethodRowFields, AMethodsOwnFieldsReachItsRowsAlone) {
  CaseSpec c;
  c.method = *parse_method("gemm_rs_fused");
  c.bytes = 4ull << 20;
  c.gemm_k = 256;
  c.tiles = 4;
  c.flows = {{0, 1}, {1, 0}};
  const json row = result_row(c, measured());
  ASSERT_TRUE(row.contains("gemm_rs"));
  EXPECT_EQ(row["gemm_rs"]["k"], 256);
  EXPECT_TRUE(row.contains("collective")) << "its kind's";
  EXPECT_FALSE(row.contains("tflops")) << "the gemm method's";
  CaseOutcome failed;
  failed.status = CaseStatus::kFailed;
  failed.error = "x";
  const json failed_row = result_row(c, failed);
  EXPECT_TRUE(failed_row["gemm_rs"]["gemm_tflops"].is_null()) << "a failed row names its GEMM, without figures";
}

}  // namespace
}  // namespace p2pbench
