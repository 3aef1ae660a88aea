#include "methods/gemm_rs/gemm_rs_row_fields.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

#include "measure/case_outcome.hpp"
#include "results/json_fields.hpp"
#include "stats/statistics.hpp"

namespace p2pbench::gemm_rs {

using json = nlohmann::json;

namespace {

// Its GEMM's shape (m = n from bytes, the f32 D) and that GEMM's flops over the row's time per
// operation, per GPU.
json gemm_rs_value(const CaseSpec& c, const CaseOutcome& o) {
  if (!c.gemm_k) return json(json::value_t::discarded);
  const auto m = uint64_t(std::llround(std::sqrt(double(c.bytes / 4))));
  const double flops = 2.0 * double(m) * double(m) * double(*c.gemm_k);
  std::vector<double> tflops;
  if (o.status == CaseStatus::kOk)
    for (double us : o.time_us) tflops.push_back(flops / (us * 1e-6) / 1e12);
  return {{"m", m}, {"n", m}, {"k", *c.gemm_k}, {"tiles", optional_json(c.tiles)}, {"gemm_flops", flops},
          {"gemm_tflops", summary_json_or_null(tflops)}};
}

}  // namespace

RowField gemm_rs_row_field() {
  RowField f{"gemm_rs", RowFieldType::kObject, "",
             "the GEMM -> reduce-scatter pipeline (gemm_rs_* methods): the GEMM's shape (m = n from bytes: the f32 D "
             "is bytes = 4 m n), its flops per rank, and those flops over the row's time per operation (TFLOP/s per "
             "GPU; for gemm_rs_rs_only the GEMM the reduce-scatter belongs to). Overlap efficiency = (T_sequential - "
             "T_fused) / min(T_gemm_only, T_rs_only) from the rows' time_us (p2pbench-report)."};
  f.members = {{"m", RowFieldType::kCount},
               {"n", RowFieldType::kCount},
               {"k", RowFieldType::kCount},
               {"tiles", RowFieldType::kCount, "", "", {}, true},
               {"gemm_flops", RowFieldType::kNumber, "FLOP"},
               {"gemm_tflops", RowFieldType::kStats, "TFLOP/s", "", {}, true}};
  f.value = gemm_rs_value;
  return f;
}

}  // namespace p2pbench::gemm_rs
