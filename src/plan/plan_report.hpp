// The dry run's account of a plan: the group, the cases by pattern, the flow sets,
// the memory formula with its figures, the time estimate and its parts, what was not checked,
// and every case. Text only: --dry-run prints it, tests read it.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "plan/case_spec.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

// `layout_origin` says where the group came from ("--ranks 8", "two ranks"), for the header.
std::string describe_plan(const Config& config, const std::vector<CaseSpec>& cases, const GroupLayout& layout,
                          const std::string& layout_origin);

}  // namespace p2pbench
