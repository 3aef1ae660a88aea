// The signal area beside the transfer buffers: each rank holds regions of kSignalRegionBytes,
// as many as the most flows one rank of the plan takes part in (plan/device_memory.hpp,
// signal_regions), mapped by its peers as its buffers are. Methods that publish their data with
// flags (put with signal) keep their flags and credits there: at each end of a flow, the region
// of the flow's index among the case's flows that end takes part in (signal_region), so no two
// flows of a case, and no two roles of a rank, share a word. Zeroed when allocated; a method
// resets its own regions before it relies on them.
#pragma once

#include <cstddef>

namespace p2pbench {

constexpr size_t kSignalRegionBytes = size_t(256) << 10;

}  // namespace p2pbench
