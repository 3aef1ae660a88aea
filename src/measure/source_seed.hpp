// The seed of the pattern one source rank writes in a sample: each source its own, so that bytes
// from the wrong peer (a chunk of a collective, a flow's data) fail verification.
#pragma once

#include <cstdint>

namespace p2pbench {

inline uint64_t source_seed(uint64_t sample_seed, int source) {
  return sample_seed ^ (uint64_t(source + 1) * 0x9e3779b97f4a7c15ull);
}

}  // namespace p2pbench
