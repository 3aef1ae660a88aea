// ResultsFile: checkpoints after every row, a rank resumed after another rank declared it lost
// leaves that account alone, a finished file only gains notes; the output path's lock and the
// rule for replacing an existing file.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "common/safe_file.hpp"
#include "common/errors.hpp"
#include "results/output_guard.hpp"
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

// Once the complete file is on disk, a later failure (a peer lost at the end, the watchdog)
// adds a note to it: the file is never turned back into a checkpoint.
TEST(ResultsFile, AFinishedFileOnlyGainsNotes) {
  const std::string path = temp_path("finished.json");
  ResultsFile file(path, 1, true);
  file.set_meta({{"label", "x"}});
  file.add_row({{"status", "ok"}});
  file.finish({{"label", "x"}}, nlohmann::json::object(), nlohmann::json(), "");
  ASSERT_EQ(file.write_now("checkpoint reason", "rank 1 was lost after the results were complete: stopped"),
            ResultsFile::Written::kNote);
  const auto doc = nlohmann::json::parse(read_text(path));
  EXPECT_EQ(doc["incomplete"], false);
  EXPECT_EQ(doc["results"].size(), 1u);
  ASSERT_EQ(doc["notes"].size(), 1u);
  EXPECT_EQ(doc["notes"][0], "rank 1 was lost after the results were complete: stopped");
  std::remove(path.c_str());
}

// The writer finished the file and was then lost: the rank that takes over finds the finished
// file on disk and adds its note there instead of writing its rows as a checkpoint.
TEST(ResultsFile, ARankTakingOverKeepsTheWritersFinishedFile) {
  const std::string path = temp_path("taken-over-finished.json");
  ResultsFile writer(path, 1, true), other(path, 1, false);
  for (ResultsFile* f : {&writer, &other}) {
    f->set_meta({{"label", "x"}});
    f->add_row({{"status", "ok"}});
  }
  writer.finish({{"label", "x"}}, nlohmann::json::object(), nlohmann::json(), "");
  other.make_writer();
  ASSERT_EQ(other.write_now("checkpoint reason", "rank 0 was lost after the results were complete: stopped"),
            ResultsFile::Written::kNote);
  // The writer, continued, adds its own note beside it rather than over it.
  ASSERT_EQ(writer.write_now("checkpoint reason", "rank 1 was lost after the results were complete: exited"),
            ResultsFile::Written::kNote);
  const auto doc = nlohmann::json::parse(read_text(path));
  EXPECT_EQ(doc["incomplete"], false);
  ASSERT_TRUE(doc.contains("notes")) << doc.dump();
  ASSERT_EQ(doc["notes"].size(), 2u) << doc.dump();
  EXPECT_EQ(doc["notes"][0], "rank 0 was lost after the results were complete: stopped");
  EXPECT_EQ(doc["notes"][1], "rank 1 was lost after the results were complete: exited");
  std::remove(path.c_str());
}

TEST(OutputLock, ASecondHolderIsRefusedNamingTheFirst) {
  const std::string path = temp_path("locked.json");
  {
    OutputLock first = OutputLock::acquire(path, "node-a");
    const auto holder = OutputLock::holder(path);
    ASSERT_TRUE(holder);
    EXPECT_NE(holder->find("pid " + std::to_string(getpid()) + " on host node-a since "), std::string::npos) << *holder;
    try {
      OutputLock second = OutputLock::acquire(path, "node-b");
      FAIL() << "a second lock on the same path was granted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--output"), std::string::npos) << what;
      EXPECT_NE(what.find("in use by another p2pbench run (pid " + std::to_string(getpid()) + " on host node-a"),
                std::string::npos)
          << what;
    }
  }
  EXPECT_FALSE(OutputLock::holder(path));
  EXPECT_NE(access(OutputLock::lock_path(path).c_str(), F_OK), 0) << "the lock file is removed at the end";
  OutputLock again = OutputLock::acquire(path, "node-b");  // free once the first is gone
}

TEST(OutputLock, AStaleLockFileIsNotAHolder) {
  const std::string path = temp_path("stale.json");
  std::ofstream(OutputLock::lock_path(path)) << "pid 1 on host gone since 2020-01-01T00:00:00Z";
  EXPECT_FALSE(OutputLock::holder(path));
  OutputLock lock = OutputLock::acquire(path, "node-a");
}

TEST(OutputGuard, OnlyCheckpointsAndEmptyFilesAreReplacedWithoutForce) {
  const std::string path = temp_path("existing.json");
  const auto refused = [&](bool force) {
    try {
      check_output_replaceable(path, force);
      return std::string();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(refused(false), "") << "no file";
  std::ofstream(path) << "";
  EXPECT_EQ(refused(false), "") << "an empty file";
  std::ofstream(path) << R"({"schema_version": 2, "incomplete": true, "meta": {}, "results": [{}]})";
  EXPECT_EQ(refused(false), "") << "a checkpoint";
  std::ofstream(path) << R"({"schema_version": 2, "incomplete": false, "meta": {"timestamp_utc": "2026-11-25T01:00:00Z"},
                             "results": [{}, {}, {}]})";
  EXPECT_NE(refused(false).find("holds the complete results of an earlier run (3 cases, made 2026-11-25T01:00:00Z)"),
            std::string::npos)
      << refused(false);
  EXPECT_NE(refused(false).find("--force"), std::string::npos);
  EXPECT_EQ(refused(true), "");
  std::ofstream(path) << "previous results";
  EXPECT_NE(refused(false).find("is not a p2pbench results file"), std::string::npos) << refused(false);
  std::ofstream(path) << R"({"schema_version": 2, "incomplete": "yes"})";
  EXPECT_NE(refused(false).find("complete results"), std::string::npos) << "only true marks a checkpoint";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace p2pbench
