// Where the repository's sources are (configs/, results/, tests/unit/data/): for tests that read
// the committed files.
#pragma once

namespace p2pbench {

// The source folder this build was configured from (an absolute path).
const char* test_source_dir();

}  // namespace p2pbench
