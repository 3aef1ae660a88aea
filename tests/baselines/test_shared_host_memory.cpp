#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <string>

#include "common/errors.hpp"
#include "engines/shared_host_memory.hpp"

namespace p2pbench {
namespace {

bool name_exists(const std::string& name) {
  struct stat st {};
  return stat(("/dev/shm" + name).c_str(), &st) == 0;
}

TEST(SharedHostMemory, CreatorAndOpenerSeeTheSameBytesUnderAPrivateName) {
  SharedHostMemory created = SharedHostMemory::create(10000, "a test area");
  ASSERT_TRUE(created);
  EXPECT_EQ(created.name().rfind("/p2pbench-", 0), 0u) << created.name();
  EXPECT_EQ(created.size() % 4096, 0u);
  EXPECT_GE(created.size(), 10000u);
  struct stat st {};
  ASSERT_EQ(stat(("/dev/shm" + created.name()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (size_t i = 0; i < created.size(); ++i) ASSERT_EQ(static_cast<char*>(created.host())[i], 0) << i;

  SharedHostMemory opened = SharedHostMemory::open(created.name(), 10000, "a test area");
  std::strcpy(static_cast<char*>(created.host()) + 5000, "through the shared mapping");
  EXPECT_STREQ(static_cast<char*>(opened.host()) + 5000, "through the shared mapping");

  created.unlink();
  EXPECT_FALSE(name_exists(created.name()));
  opened.unlink();  // a no-op for a rank that did not create it
  static_cast<char*>(opened.host())[0] = 1;  // mappings outlive the name
  EXPECT_EQ(static_cast<char*>(created.host())[0], 1);
}

TEST(SharedHostMemory, NameIsRemovedWhenTheCreatorGoesAwayWithoutUnlinking) {
  std::string name;
  {
    SharedHostMemory created = SharedHostMemory::create(4096, "a test area");
    name = created.name();
    EXPECT_TRUE(name_exists(name));
    SharedHostMemory moved = std::move(created);  // the move hands over the ownership of the name
    EXPECT_FALSE(created);
    EXPECT_TRUE(name_exists(name));
  }
  EXPECT_FALSE(name_exists(name));
}

TEST(SharedHostMemory, OpeningTooSmallOrMissingObjectsSaysWhat) {
  SharedHostMemory created = SharedHostMemory::create(4096, "a test area");
  try {
    SharedHostMemory::open(created.name(), 1 << 20, "the staging area");
    FAIL() << "opened an object smaller than asked";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("the staging area"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected at least"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SharedHostMemory::open("/p2pbench-no-such-object", 4096, "x"), RuntimeFailure);
}

TEST(SharedHostMemory, SpaceProblemNamesTheFilesystemTheNeedAndTheFix) {
  EXPECT_FALSE(shm_space_problem(std::nullopt, 1 << 20, "staged"));  // unknown: creation will tell
  EXPECT_FALSE(shm_space_problem(uint64_t(2) << 20, 1 << 20, "staged"));
  const auto problem = shm_space_problem(uint64_t(64) << 20, uint64_t(96) << 20, "staged");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("/dev/shm has 64 MiB free"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("staged needs 96 MiB"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("--shm-size"), std::string::npos) << *problem;
  EXPECT_TRUE(SharedHostMemory::free_bytes("/dev/shm").has_value());
  EXPECT_FALSE(SharedHostMemory::free_bytes("/no/such/directory").has_value());
}

}  // namespace
}  // namespace p2pbench
