// p2pbench-check RESULTS.json EXPECT.json PAIR_CLASS: the judgement of every row of a results
// file (schema v1 or v2) against the expectations of PAIR_CLASS, as JSON on stdout (the shape
// of to_json(ExpectationReport), expectation_check.hpp). Exit 2 with the reason on bad input.
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "checked_row.hpp"
#include "judgement/expectations.hpp"

using nlohmann::json;
using namespace p2pbench;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: p2pbench-check RESULTS.json EXPECT.json PAIR_CLASS\n");
    return kExitBadInput;
  }
  try {
    const json results = read_json_file(argv[1], "RESULTS.json");
    if (!results.contains("results") || !results["results"].is_array())
      throw InputError("RESULTS.json", argv[1], "no \"results\" list: not a p2pbench results file");
    const json expectations = load_expectations(argv[2]);
    std::vector<CheckedCase> cases;
    for (const json& row : results["results"]) cases.push_back(checked_row(row));
    const ExpectationReport report = check_expectations(expectations, cases, argv[3]);
    std::printf("%s\n", to_json(report, argv[3]).dump(1).c_str());
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "p2pbench-check: %s\n", e.what());
    return kExitBadInput;
  }
}
