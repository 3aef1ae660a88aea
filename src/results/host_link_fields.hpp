// The fields every host-link method's rows carry (kind host_link): how its host buffer was
// allocated and placed (identity: a case of its own per kind and placement), and what the host
// gave it (docs/host-memory.md).
#pragma once

#include <vector>

#include "vocab/row_fields.hpp"

namespace p2pbench {

// host_memory, host_numa, numa_node, host_pages.
std::vector<RowField> host_link_fields();

}  // namespace p2pbench
