// The only file of test_core compiled with the source folder's path: every other file's object
// is then the same in a copy of the tree, and a compiler cache reuses it there
// (tests/registry/test_adding_a_method.py builds test_core in a scratch copy).
#include "source_dir.hpp"

namespace p2pbench {

const char* test_source_dir() { return P2PBENCH_SOURCE_DIR; }

}  // namespace p2pbench
