// The fields the gemm method's rows add: its GEMM (shape, flops, operands) and its TFLOP/s per
// sample beside time_us.
#pragma once

#include <vector>

#include "vocab/row_fields.hpp"

namespace p2pbench {

// gemm, tflops, samples_tflops.
std::vector<RowField> gemm_row_fields();

}  // namespace p2pbench
