// The field every collective method's rows carry (kind collective): the operation's figures with
// nccl-tests' conventions (collective_figures, results/case_result.hpp).
#pragma once

#include "vocab/row_fields.hpp"

namespace p2pbench {

// `collective`: operation, ranks, bytes, element, operands, bus factor, algbw and busbw.
RowField collective_field();

}  // namespace p2pbench
