"""docs/architecture.md's "Adding a method", followed as written on a scratch copy of the tree.

A generated copy method, toy_copy, with a row field of its own (bytes_per_thread), is added the way
the page says: its kernel and engine in src/methods/toy_copy/, its test in tests/toy_copy/, its
config in configs/toy-copy.json, then `scripts/update-method-lists.py BUILD/src/p2pbench`. Nothing
else of the tree is edited (checked), and then the scratch build's CPU tests that read the
registry pass: the toy's own test (registry, config, sweep, its row's field), test_core (every
config in configs/, the toy's included), the front door's tests of the method list
(--list-methods is schema/methods.json, --help lists it), the schema's enums and generated
fields, and no method named outside its folder.
Its row validates against the regenerated schema and the report reads its field from the list.

Usage (CTest: adding_a_method): test_adding_a_method.py --scratch DIR [--cmake-arg ARG ...]
DIR is emptied and refilled; put it where the build's compiler cache finds the tree's objects (the
build folder: ccache's base_dir then makes its compile lines those of the build itself).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
COPIED = ("CMakeLists.txt", "cmake", "src", "kernels", "tools", "tests", "configs", "schema", "scripts", "results")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "build-*")
# The CPU tests of the scratch build that read the registry: CTest's, and the front door's and the
# schema's tests of the method list (pytest -k: the rest of those files reads no method).
TESTS = "^(test_toy_copy|test_core|no_method_lists)$"
PYTESTS = (("tests/cli/test_cli.py", "methods_file or methods_help"), ("tests/schema/test_method_enums.py", ""))
TARGETS = ("p2pbench", "test_core", "test_toy_copy")

KERNEL = r'''// toy_copy's kernel: a grid-stride byte copy (a generated method: tests/registry/test_adding_a_method.py).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/cuda_check.hpp"

namespace toy {

namespace {

__global__ void toy_copy_kernel(const uint8_t* src, uint8_t* dst, size_t bytes) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes; i += stride) dst[i] = src[i];
}

}  // namespace

void enqueue_toy_copy(const void* src, void* dst, size_t bytes, int blocks, int threads, cudaStream_t stream) {
  toy_copy_kernel<<<blocks, threads, 0, stream>>>(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), bytes);
  p2pbench::cuda_check_launch("the toy copy kernel");
}

}  // namespace toy
'''

ENGINE = r'''// toy_copy's engine and its registration, with the row field its rows add.
#include <cuda_runtime_api.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "engines/engine_registry.hpp"
#include "measure/case_outcome.hpp"

namespace toy {

void enqueue_toy_copy(const void* src, void* dst, size_t bytes, int blocks, int threads, cudaStream_t stream);

namespace {

using namespace p2pbench;

class ToyCopyEngine final : public TransferEngine {
 public:
  ToyCopyEngine(int blocks, int threads) : blocks_(blocks), threads_(threads) {}
  std::optional<std::string> unsupported_reason(int) const override { return std::nullopt; }
  void prepare(int, int, const std::vector<Flow>&) override {}
  void launch(const Transfer& t, cudaStream_t stream) override { enqueue_toy_copy(t.src, t.dst, t.bytes, blocks_, threads_, stream); }
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return blocks_; }

 private:
  int blocks_, threads_;
};

nlohmann::json bytes_per_thread(const CaseSpec& c, const CaseOutcome&) {
  return double(c.bytes) / (double(c.blocks.value_or(1)) * double(c.threads.value_or(1)));
}

MethodInfo toy_info() {
  MethodInfo m{Method{}, "toy_copy", MethodKind::kCopy, {}, "toy copy kernel", "tab:gray", 90, false, "",
               "a grid-stride byte copy through the peer mapping (a generated method)",
               {blocks_axis(4, "blocks of the toy kernel"), threads_axis(128, "threads per block")}};
  RowField field{"bytes_per_thread", RowFieldType::kNumber, "bytes", "toy_copy: the bytes each thread of its grid copies"};
  field.value = bytes_per_thread;
  m.row_fields = {field};
  return m;
}

}  // namespace

P2PBENCH_REGISTER_METHOD(kToyCopy, toy_info(), [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
  return std::make_unique<ToyCopyEngine>(*c.blocks, *c.threads);
});

}  // namespace toy
'''

TEST_CMAKE = r'''# toy_copy's test (a generated method): the shipped methods linked whole, as p2pbench links them.
p2pbench_add_unit_test(test_toy_copy test_toy_copy.cpp)
target_link_libraries(test_toy_copy PRIVATE p2pbench_core p2pbench_methods)
target_compile_definitions(test_toy_copy PRIVATE TOY_CONFIG="${PROJECT_SOURCE_DIR}/configs/toy-copy.json")
'''

TEST = r'''// toy_copy (a generated method): in the registry, its config parses, its cases expand, and its
// rows carry the field it declares. With TOY_ROW set, writes one of its rows there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "config/config.hpp"
#include "engines/engine_registry.hpp"
#include "plan/sweep.hpp"
#include "results/method_row_fields.hpp"
#include "results/result_writer.hpp"

namespace {

using namespace p2pbench;

TEST(ToyCopy, IsAMethodWithItsRowField) {
  const std::optional<Method> m = parse_method("toy_copy");
  ASSERT_TRUE(m);
  ASSERT_EQ(row_fields_of(*m).size(), 1u);
  const Config config = parse_config(read_json_file(TOY_CONFIG, "--config"));
  const std::vector<CaseSpec> cases = expand_cases(config);
  ASSERT_EQ(cases.size(), 8u);  // 2 block counts x 2 directions x 2 ordered pairs
  CaseOutcome o;
  o.iterations = 1;
  o.verified = true;
  o.gbps = {10.0, 11.0};
  o.time_us = {1.0, 0.9};
  for (const CaseSpec& c : cases) {
    EXPECT_NE(make_engine(c), nullptr);
    o.flows = {FlowSamples::named(c.flows.front(), c.bytes)};
    o.flows[0].gbps = o.gbps;
    o.flows[0].time_us = o.time_us;
    const nlohmann::json row = result_row(c, o);
    EXPECT_DOUBLE_EQ(row["bytes_per_thread"].get<double>(), double(c.bytes) / (*c.blocks * *c.threads));
    if (const char* out = std::getenv("TOY_ROW")) std::ofstream(out) << row.dump(2);
  }
}

}  // namespace
'''

CONFIG = {
    "description": "toy_copy, a generated method (tests/registry/test_adding_a_method.py).",
    "label": "toy-copy",
    "methods": ["toy_copy"],
    "directions": ["push", "pull"],
    "modes": ["uni"],
    "sizes": ["1MiB"],
    "samples": 3,
    "toy_copy": {"blocks": [2, 8]},
}

ADDED = {
    "src/methods/toy_copy/toy_copy_kernel.cu": KERNEL,
    "src/methods/toy_copy/toy_copy_engine.cpp": ENGINE,
    "tests/toy_copy/CMakeLists.txt": TEST_CMAKE,
    "tests/toy_copy/test_toy_copy.cpp": TEST,
    "configs/toy-copy.json": json.dumps(CONFIG, indent=2) + "\n",
}
GENERATED = {"schema/methods.json", "schema/results.schema.json"}  # update-method-lists.py's


def run(command: list, cwd: pathlib.Path, timeout: int, env: dict | None = None) -> str:
    print("+", " ".join(str(c) for c in command), flush=True)
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    if done.returncode != 0:
        sys.exit(f"adding_a_method: {' '.join(str(c) for c in command)} exited {done.returncode}:\n"
                 f"{done.stdout[-6000:]}\n{done.stderr[-6000:]}")
    return done.stdout


def digests(tree: pathlib.Path) -> dict[str, str]:
    return {str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in tree.rglob("*") if p.is_file() and "build" not in p.relative_to(tree).parts[:1]}


def copy_tree(scratch: pathlib.Path) -> pathlib.Path:
    tree = scratch / "tree"
    if scratch.exists():
        shutil.rmtree(scratch)
    tree.mkdir(parents=True)
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=SKIPPED, symlinks=True)
        else:
            shutil.copy2(source, tree / name)
    return tree


def add_the_method(tree: pathlib.Path) -> None:
    """Steps 1 to 3: the kernel, the engine with its registration, its test and config."""
    for path, text in ADDED.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)


def check_only_its_files_changed(before: dict[str, str], after: dict[str, str]) -> None:
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed <= set(ADDED) | GENERATED, f"edited beyond the method's files: {sorted(changed - set(ADDED) - GENERATED)}"
    assert set(ADDED) <= changed and GENERATED <= changed, f"not written: {sorted(set(ADDED) | GENERATED - changed)}"


def check_the_lists(tree: pathlib.Path, row_file: pathlib.Path) -> None:
    """The list, the schema and the report know the method and its field; its row is valid."""
    listing = json.loads((tree / "schema" / "methods.json").read_text())
    assert [m["row_fields"] for m in listing["methods"] if m["name"] == "toy_copy"] == [["bytes_per_thread"]]
    schema = json.loads((tree / "schema" / "results.schema.json").read_text())
    assert "toy_copy" in schema["definitions"]["row"]["properties"]["method"]["enum"]
    assert schema["definitions"]["row"]["properties"]["bytes_per_thread"]["minimum"] == 0
    check = ("import json, sys\n"
             "from p2pbench_report.methods import ROW_FIELDS\n"
             "from p2pbench_report.draft7_subset import Validator\n"
             "assert 'bytes_per_thread' in [f['name'] for f in ROW_FIELDS]\n"
             "schema = json.load(open(sys.argv[1]))\n"
             "row = Validator({'$ref': '#/definitions/row', 'definitions': schema['definitions']})\n"
             "errors = [e.message for e in row.iter_errors(json.load(open(sys.argv[2])))]\n"
             "assert not errors, errors\n")
    run([sys.executable, "-c", check, tree / "schema" / "results.schema.json", row_file], tree, 120,
        {"PYTHONPATH": str(tree / "scripts")})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scratch", required=True, type=pathlib.Path)
    parser.add_argument("--cmake-arg", action="append", default=[])
    args = parser.parse_args()
    tree = copy_tree(args.scratch.resolve())
    before = digests(tree)
    add_the_method(tree)
    build = tree / "build"
    jobs = os.environ.get("P2PBENCH_JOBS", str(os.cpu_count() or 2))
    run(["cmake", "-S", tree, "-B", build, "-G", "Ninja", *args.cmake_arg], tree, 600)
    run(["cmake", "--build", build, "-j", jobs, "--target", *TARGETS], tree, 1500)
    run([sys.executable, tree / "scripts" / "update-method-lists.py", build / "src" / "p2pbench"], tree, 120)  # step 4
    check_only_its_files_changed(before, digests(tree))
    row_file = args.scratch.resolve() / "toy-row.json"
    run([build / "tests" / "toy_copy" / "test_toy_copy"], tree, 300, {"TOY_ROW": str(row_file)})
    check_the_lists(tree, row_file)
    print(run(["ctest", "--test-dir", build, "-R", TESTS, "--output-on-failure", "-j", "2"], tree, 1500)[-3000:])
    for path, selection in PYTESTS:
        chosen = ["-k", selection] if selection else []
        print(run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", tree / path, *chosen], tree, 600,
                  {"P2PBENCH_BIN": str(build / "src" / "p2pbench")})[-1500:])
    print("adding_a_method: toy_copy added by its folder, test and config alone; its CPU tests pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
