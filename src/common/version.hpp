// The tool's version and the git commit it was built from (recorded in every result).
#pragma once

namespace p2pbench {

const char* tool_version();
const char* tool_git_sha();

}  // namespace p2pbench
