#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "engines/nccl_engine.hpp"

namespace p2pbench {
namespace {

TEST(NcclEnvironment, SetsLoopbackBootstrapAndNoMulticastButKeepsTheUsersChoice) {
  unsetenv("NCCL_SOCKET_IFNAME");
  setenv("NCCL_NVLS_ENABLE", "1", 1);  // the user's own value wins
  const std::vector<std::string> set = apply_nccl_environment();
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set[0], "NCCL_SOCKET_IFNAME=lo");
  EXPECT_STREQ(std::getenv("NCCL_SOCKET_IFNAME"), "lo");
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "1");
  EXPECT_TRUE(apply_nccl_environment().empty());  // nothing left to set
}

TEST(NcclEnvironment, VersionIsReportedExactlyWhenTheBuildHasNccl) {
  if (nccl_in_build()) {
    const std::string v = nccl_version();
    EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
  } else {
    EXPECT_EQ(nccl_version(), "");
    EXPECT_THROW(NcclCommunicator::unique_id(), std::exception);
  }
}

}  // namespace
}  // namespace p2pbench
