#include "common/version.hpp"

namespace p2pbench {

const char* tool_version() { return P2PBENCH_VERSION; }
const char* tool_git_sha() { return P2PBENCH_GIT_SHA; }

}  // namespace p2pbench
