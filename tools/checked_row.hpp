// A results file's row as the expectations' judgement needs it (expectation_check.hpp): the
// reader p2pbench-check uses, and the one place outside tests where a row is read back.
#pragma once

#include <nlohmann/json.hpp>

#include "judgement/expectation_check.hpp"

namespace p2pbench {

// The row itself names the case's variables; its metric is the statistics object it carries;
// the figure's samples are its raw samples, else its stored median (a file without samples).
CheckedCase checked_row(const nlohmann::json& row);

}  // namespace p2pbench
