// ResultsFile: checkpoints after every row, and a rank resumed after another rank declared it
// lost leaves that account alone.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "common/safe_file.hpp"
#include "results/results_file.hpp"

namespace p2pbench {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "/p2pbench-" + std::to_string(getpid()) + "-" + name;
}

TEST(ResultsFile, CheckpointsEveryRow) {
  const std::string path = temp_path("checkpoint.json");
  ResultsFile file(path, 3, true);
  file.set_meta({{"label", "x"}});
  file.add_row({{"status", "ok"}});
  EXPECT_NE(read_text(path).find("\"cases_done\":1"), std::string::npos) << read_text(path);
  file.add_row({{"status", "ok"}});
  EXPECT_NE(read_text(path).find("\"cases_done\":2"), std::string::npos);
  std::remove(path.c_str());
}

TEST(ResultsFile, LeavesAnotherRanksAccountAlone) {
  const std::string path = temp_path("taken-over.json");
  ResultsFile file(path, 3, true);
  file.set_meta({{"label", "x"}});
  file.add_row({{"status", "ok"}});
  // Another rank found this one stopped and wrote its own account (a new file renamed in place).
  write_file_atomically(path, "{\"incomplete_reason\": \"rank 0 was lost\"}\n", false);
  file.add_row({{"status", "ok"}});
  EXPECT_EQ(read_text(path), "{\"incomplete_reason\": \"rank 0 was lost\"}\n");
  EXPECT_FALSE(file.writer());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace p2pbench
