#include "results/collective_fields.hpp"

#include <nlohmann/json.hpp>

#include "results/case_result.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

using json = nlohmann::json;

namespace {

json collective_value(const CaseSpec& c, const CaseOutcome& o) {
  const CollectiveFigures f = collective_figures(c, o);
  return {{"operation", to_string(f.op)},
          {"ranks", f.ranks},
          {"bytes", f.size ? json(f.size->bytes) : json()},
          {"element", to_string(f.element)},
          {"operands", "integers -8..8 per element and rank (sums exact in any order)"},
          {"bus_factor", bus_factor(f.op, f.ranks)},
          {"algbw_gbps", summary_json_or_null(f.algbw_gbps)},
          {"busbw_gbps", summary_json_or_null(f.busbw_gbps)},
          {"samples_busbw_gbps", f.busbw_gbps}};
}

RowField member(const char* name, RowFieldType type, const char* unit, const char* description = "",
                std::vector<std::string> values = {}, bool nullable = false) {
  return {name, type, unit, description, std::move(values), nullable};
}

}  // namespace

RowField collective_field() {
  RowField f{"collective", RowFieldType::kObject, "",
             "collective methods (kind collective): the operation's figures with nccl-tests' conventions. bytes: the "
             "size the figures use (reduce-scatter: each rank's input; all-gather: each rank's output; all-reduce: the "
             "vector; all-to-all: each rank's input, a chunk for every rank; rounded down to whole 16-byte chunks per "
             "rank but for all-reduce). algbw = bytes / time per operation (the union of every rank's window); busbw = "
             "algbw x bus_factor ((n-1)/n for reduce-scatter, all-gather and all-to-all, 2(n-1)/n for all-reduce). "
             "GB = 1e9 bytes."};
  f.members = {
      member("operation", RowFieldType::kText, "", "",
             {to_string(Collective::kReduceScatter), to_string(Collective::kAllGather), to_string(Collective::kAllReduce),
              to_string(Collective::kAllToAll)}),
      member("ranks", RowFieldType::kCount, ""),
      member("bytes", RowFieldType::kCount, "bytes", "", {}, true),
      member("element", RowFieldType::kText, "",
             "the type of the operation's elements, which bytes count (f32 unless the method adds bf16)",
             {to_string(CollectiveElement::kF32), to_string(CollectiveElement::kBf16)}),
      member("operands", RowFieldType::kText, ""),
      member("bus_factor", RowFieldType::kNumber, ""),
      member("algbw_gbps", RowFieldType::kStats, "GB/s", "", {}, true),
      member("busbw_gbps", RowFieldType::kStats, "GB/s", "", {}, true),
      member("samples_busbw_gbps", RowFieldType::kNumbers, "GB/s"),
  };
  f.value = collective_value;
  return f;
}

}  // namespace p2pbench
