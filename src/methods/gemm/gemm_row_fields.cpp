#include "methods/gemm/gemm_row_fields.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

#include "measure/case_outcome.hpp"
#include "results/json_fields.hpp"
#include "stats/statistics.hpp"

namespace p2pbench {

using json = nlohmann::json;

namespace {

// D is f32, m x m, from bytes = 4 m^2.
uint64_t side_of(const CaseSpec& c) { return uint64_t(std::llround(std::sqrt(double(c.bytes / 4)))); }
double flops_of(const CaseSpec& c) { return 2.0 * double(side_of(c)) * double(side_of(c)) * double(c.gemm_k.value_or(0)); }

// 1e12 FLOP/s per sample: 2 m n k per GEMM over the sample's time per GEMM.
std::vector<double> tflops_of(const CaseSpec& c, const CaseOutcome& o) {
  std::vector<double> tflops;
  if (o.status == CaseStatus::kOk)
    for (double us : o.time_us) tflops.push_back(flops_of(c) / (us * 1e-6) / 1e12);
  return tflops;
}

json gemm_value(const CaseSpec& c, const CaseOutcome&) {
  if (!c.gemm_k) return json(json::value_t::discarded);
  return {{"m", side_of(c)}, {"n", side_of(c)}, {"k", optional_json(c.gemm_k)}, {"flops", flops_of(c)},
          {"operands", "full-entropy: bf16 of N(0, 1)"}, {"output", "f32"}};
}

json tflops_value(const CaseSpec& c, const CaseOutcome& o) {
  return c.gemm_k ? summary_json_or_null(tflops_of(c, o)) : json(json::value_t::discarded);
}

json samples_tflops_value(const CaseSpec& c, const CaseOutcome& o) {
  return c.gemm_k ? json(tflops_of(c, o)) : json(json::value_t::discarded);
}

}  // namespace

std::vector<RowField> gemm_row_fields() {
  RowField gemm{"gemm", RowFieldType::kObject, "",
                "the gemm method's GEMM: D (f32, m x n, m = n from bytes = 4 m n) = A (bf16, m x k) B (bf16, k x n), "
                "its flops per GEMM (2 m n k), its operands and output type"};
  gemm.members = {{"m", RowFieldType::kCount},
                  {"n", RowFieldType::kCount},
                  {"k", RowFieldType::kCount, "", "", {}, true},
                  {"flops", RowFieldType::kNumber, "FLOP"},
                  {"operands", RowFieldType::kText},
                  {"output", RowFieldType::kText}};
  gemm.value = gemm_value;
  RowField tflops{"tflops", RowFieldType::kStats, "TFLOP/s",
                  "gemm: TFLOP/s (1e12 FLOP/s: 2 m n k per GEMM over the sample's time per GEMM), over the samples",
                  {}, true};
  tflops.value = tflops_value;
  RowField samples{"samples_tflops", RowFieldType::kNumbers, "TFLOP/s", "gemm: TFLOP/s of each sample"};
  samples.value = samples_tflops_value;
  return {gemm, tflops, samples};
}

}  // namespace p2pbench
