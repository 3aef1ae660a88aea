// Writes example result documents (through the real writer) into the directory given as
// argv[1], for the JSON Schema check run by tests/schema.
#include <cstdio>
#include <string>

#include "example_results.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  p2pbench::write_json_atomically(dir + "/example-complete.json", p2pbench::testing::example_document());
  p2pbench::write_json_atomically(
      dir + "/example-incomplete.json",
      p2pbench::result_document(p2pbench::testing::example_meta(), {}, nlohmann::json(), true, "stopped early"));
  return 0;
}
