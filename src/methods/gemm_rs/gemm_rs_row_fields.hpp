// The field the GEMM -> reduce-scatter pipeline's rows add beside the collective's: its GEMM's
// shape and flops, and those flops over the row's time per operation.
#pragma once

#include "vocab/row_fields.hpp"

namespace p2pbench::gemm_rs {

// gemm_rs.
RowField gemm_rs_row_field();

}  // namespace p2pbench::gemm_rs
