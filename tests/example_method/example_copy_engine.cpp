// The example method's engine and its registration: the one line that makes "example_copy" a
// method the config, the sweep, the limits, --help, the case loop and the results writer know
// (engine_registry.hpp), with the row field its rows add.
#include <cuda_runtime_api.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "engines/engine_registry.hpp"
#include "measure/case_outcome.hpp"

namespace example {

void enqueue_example_copy(const void* src, void* dst, size_t bytes, int blocks, int threads, cudaStream_t stream);

namespace {

using namespace p2pbench;

class ExampleCopyEngine final : public TransferEngine {
 public:
  ExampleCopyEngine(int blocks, int threads) : blocks_(blocks), threads_(threads) {}
  std::optional<std::string> unsupported_reason(int) const override { return std::nullopt; }
  void prepare(int, int, const std::vector<Flow>&) override {}
  void launch(const Transfer& t, cudaStream_t stream) override {
    enqueue_example_copy(t.src, t.dst, t.bytes, blocks_, threads_, stream);
  }
  // Every block lands on an SM of its own while there are SMs to spare.
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return blocks_; }

 private:
  int blocks_, threads_;
};

bool whole_warps(uint64_t v) { return v >= 32 && v <= 1024 && v % 32 == 0; }
bool some_blocks(uint64_t v) { return v >= 1 && v <= 1024; }

// A row field of its own: the threads of its grid, which a reader of its rows compares across
// shapes without multiplying two columns.
nlohmann::json grid_threads(const CaseSpec& c, const CaseOutcome&) {
  if (!c.blocks || !c.threads) return nlohmann::json(nlohmann::json::value_t::discarded);
  return uint64_t(*c.blocks) * uint64_t(*c.threads);
}

MethodInfo example_copy_info() {
  MethodInfo m{Method{}, "example_copy", MethodKind::kCopy, {}, "example copy kernel", "tab:gray", 99, false, "",
               "a grid-stride SM copy through the peer mapping (the example method)",
               {{ShapeAxis::kBlocks, {4}, some_blocks, "blocks must be 1..1024", "blocks"},
                {ShapeAxis::kThreads, {256}, whole_warps, "threads per block must be a multiple of 32 from 32 to 1024",
                 "threads per block"}}};
  RowField threads{"grid_threads", RowFieldType::kCount, "threads", "example_copy: the threads of its grid (blocks x threads)"};
  threads.value = grid_threads;
  m.row_fields = {threads};
  m.cost_per_block = true;  // an SM copy: few blocks bound it (the dry run's estimate)
  return m;
}

}  // namespace

// The one line that makes it a method; nothing outside this folder names it (its test finds it by
// its name, as a config does).
P2PBENCH_REGISTER_METHOD(kExampleCopy, example_copy_info(), [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
  return std::make_unique<ExampleCopyEngine>(*c.blocks, *c.threads);
});

}  // namespace example
