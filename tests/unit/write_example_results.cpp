// Writes example result documents (through the real writer) into the directory given as
// argv[1], for the JSON Schema check run by tests/schema.
#include <cstdio>
#include <string>

#include "common/version.hpp"
#include "example_results.hpp"

namespace {

// The meta as a run writes it: this build's own tool.git_sha and provenance, so that the schema
// checks the real record.
nlohmann::json with_provenance(nlohmann::json document) {
  document["meta"]["tool"]["git_sha"] = p2pbench::tool_git_sha();
  document["meta"]["provenance"] = p2pbench::build_provenance();
  return document;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  p2pbench::write_json_atomically(dir + "/example-complete.json",
                                  with_provenance(p2pbench::testing::example_document()));
  p2pbench::write_json_atomically(
      dir + "/example-incomplete.json",
      with_provenance(
          p2pbench::result_document(p2pbench::testing::example_meta(), {}, nlohmann::json(), true, "stopped early")));
  return 0;
}
