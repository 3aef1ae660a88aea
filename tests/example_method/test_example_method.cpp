// The example method end to end: registered by its engine's file alone, it is a method of the
// registry, its config section parses and is checked by its own rules, the sweep expands its
// axes, the engine registry makes its engine, its rows carry the field it declares, and on a GPU
// the case loop runs it verified (both ends on one GPU: a functional check, never a P2P figure).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "engines/engine_registry.hpp"
#include "gbench/two_gpu_session.hpp"
#include "measure/case_loop.hpp"
#include "plan/sweep.hpp"
#include "results/method_row_fields.hpp"
#include "results/result_writer.hpp"

namespace {

using namespace p2pbench;

Config example_config() { return parse_config(read_json_file(EXAMPLE_CONFIG, "--config")); }

// Found by its name, as a config finds it: nothing outside its folder refers to its registration.
Method example_copy() {
  const std::optional<Method> m = parse_method("example_copy");
  if (!m) throw std::logic_error("example_copy is not registered: is its engine's object linked whole?");
  return *m;
}

TEST(ExampleMethod, IsInTheRegistry) {
  const Method m = example_copy();
  EXPECT_EQ(method_info(m).kind, MethodKind::kCopy);
  EXPECT_STREQ(to_string(m), "example_copy");
  ASSERT_EQ(method_info(m).swept.size(), 2u);
  EXPECT_NE(swept_axis(m, ShapeAxis::kThreads), nullptr);
  EXPECT_NE(method_list([](const MethodInfo& i) { return i.kind == MethodKind::kCopy; }).find("example_copy"),
            std::string::npos);
  bool in_help = false;
  for (const auto& [key, help] : config_key_help()) in_help = in_help || key == "example_copy";
  EXPECT_TRUE(in_help) << "its config section is among --help's keys";
}

TEST(ExampleMethod, ItsRowsCarryTheFieldItDeclares) {
  const Method m = example_copy();
  const std::vector<RowField> fields = row_fields_of(m);
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].name, "grid_threads");
  bool listed = false;  // in --list-methods --json's row_fields, and through it the schema and the report
  for (const DeclaredRowField& d : declared_row_fields())
    listed = listed || (d.field.name == "grid_threads" && d.methods == std::vector<std::string>{"example_copy"});
  EXPECT_TRUE(listed);
  CaseSpec c = expand_cases(example_config()).front();
  CaseOutcome o;
  o.status = CaseStatus::kSkipped;
  o.error = "not run";
  EXPECT_EQ(result_row(c, o)["grid_threads"], uint64_t(*c.blocks) * uint64_t(*c.threads));
  c.method = kDefaultMethod;  // another method's row has no such field
  EXPECT_FALSE(result_row(c, o).contains("grid_threads"));
}

TEST(ExampleMethod, ItsSectionParsesAndIsChecked) {
  Config c = example_config();
  const Method m = example_copy();
  EXPECT_EQ(c.kernel_axes.of(m, ShapeAxis::kBlocks), (std::vector<uint64_t>{2, 8}));
  EXPECT_EQ(c.kernel_axes.of(m, ShapeAxis::kThreads), (std::vector<uint64_t>{128}));
  EXPECT_EQ(c.to_json()["example_copy"]["blocks"], nlohmann::json({2, 8}));
  EXPECT_NO_THROW(validate_kernel_axes(c));
  c.kernel_axes.set(m, ShapeAxis::kThreads, {100});
  try {
    validate_kernel_axes(c, {{"example_copy.threads", "--threads"}});
    FAIL() << "100 threads accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("example_copy.threads[0] (from --threads) = 100"), std::string::npos) << e.what();
  }
  nlohmann::json doc = read_json_file(EXAMPLE_CONFIG, "--config");
  doc["example_copy"]["unroll"] = {2};
  EXPECT_THROW(parse_config(doc), InputError) << "an axis it does not sweep";
}

TEST(ExampleMethod, TheSweepExpandsItsAxes) {
  const std::vector<CaseSpec> cases = expand_cases(example_config());
  // 2 sizes x 2 block counts x 1 thread count x 2 directions x 1 mode x 2 ordered pairs.
  ASSERT_EQ(cases.size(), 16u);
  for (const CaseSpec& c : cases) {
    EXPECT_EQ(c.method, example_copy());
    ASSERT_TRUE(c.blocks && c.threads);
    EXPECT_TRUE(*c.blocks == 2 || *c.blocks == 8);
    EXPECT_EQ(*c.threads, 128);
    EXPECT_FALSE(c.unroll.has_value());
    EXPECT_NE(make_engine(c), nullptr);
  }
}

// A GPU test of its own (tests/example_method/CMakeLists.txt: test_example_method_gpu).
TEST(ExampleMethod, RunsVerifiedThroughTheCaseLoopOnAGpu) {
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  ASSERT_GT(devices, 0);
  const Config config = example_config();
  const RunnerOptions options = RunnerOptions::from(config, 1.0);
  gbench::TwoGpuSession session({"0", "0", true, options});
  session.open();
  for (const CaseSpec& c : expand_cases(config)) {
    if (c.flows.front().src_rank != 0) continue;  // one orientation: both ends are GPU 0
    session.ensure_buffers(BufferLayout::for_case(c.bytes, options.buffer_pool_bytes).footprint());
    const CaseOutcome out = run_case(session, options, c, session.next_seed(), [](const CaseSpec& k) { return make_engine(k); });
    EXPECT_EQ(out.status, CaseStatus::kOk) << c.name() << ": " << out.error;
    EXPECT_TRUE(out.verified) << c.name();
    EXPECT_EQ(out.gbps.size(), size_t(config.samples)) << c.name();
    ASSERT_TRUE(out.sms_used.has_value());
    EXPECT_EQ(*out.sms_used, *c.blocks);
  }
}

}  // namespace
