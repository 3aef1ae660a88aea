// The run's own all-pairs findings for a results document made elsewhere: reads a document
// (argument 1) and writes it (argument 2) with `matrices`, `rounds_agreement` and
// `suspect_pairs` computed by the code p2pbench writes them with, from its rows read back as
// the cases the run would have held. The report tool's tests
// build their synthetic runs in Python and add the findings through this, so the report tool
// is tested on what it reads from a real file and never judges pairs itself.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "case_reader.hpp"
#include "results/pair_matrix.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: matrix_findings IN.json OUT.json\n");
    return 2;
  }
  nlohmann::json document;
  try {
    std::ifstream in(argv[1]);
    document = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matrix_findings: cannot read %s: %s\n", argv[1], e.what());
    return 2;
  }
  const std::vector<nlohmann::json> rows = document.value("results", nlohmann::json::array());
  p2pbench::PairLinks links = p2pbench::pair_links_from_meta(document.at("meta"));
  for (const auto& pair : p2pbench::testing::same_device_flows(rows)) links.same_device.insert(pair);
  const auto cases = p2pbench::testing::cases_from_rows(rows);
  document.update(p2pbench::to_json(p2pbench::build_matrix_report(cases, links)));
  std::ofstream out(argv[2]);
  out << document.dump(1) << "\n";
  return out ? 0 : 1;
}
