// How many hardware queues a process asks for, with and without MPS, and what the launcher's
// environment says about the node's ranks.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "common/device_connections.hpp"

namespace p2pbench {
namespace {

TEST(DeviceConnections, ThirtyTwoWithoutMps) {
  EXPECT_EQ(device_connections_wanted(false, 1), 32);
  EXPECT_EQ(device_connections_wanted(false, 8), 32);
}

// Four MPS clients asking 32 each were refused on an H200; a share of 96 fits them.
TEST(DeviceConnections, MpsClientsShareThePool) {
  EXPECT_EQ(device_connections_wanted(true, 1), 32);
  EXPECT_EQ(device_connections_wanted(true, 3), 32);
  EXPECT_EQ(device_connections_wanted(true, 4), 24);
  EXPECT_EQ(device_connections_wanted(true, 8), 12);
  EXPECT_EQ(device_connections_wanted(true, 64), 4);
  EXPECT_EQ(device_connections_wanted(true, 0), 32);
  for (int ranks = 1; ranks <= 24; ++ranks) EXPECT_LE(device_connections_wanted(true, ranks) * ranks, 96) << ranks;
}

TEST(DeviceConnections, NodeRanksFromTheLauncher) {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMIX_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"})
    unsetenv(var);
  EXPECT_EQ(node_local_ranks_by_environment(), 1);
  setenv("SLURM_NTASKS_PER_NODE", "4(x2)", 1);
  EXPECT_EQ(node_local_ranks_by_environment(), 4);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "3", 1);
  EXPECT_EQ(node_local_ranks_by_environment(), 3);
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  unsetenv("SLURM_NTASKS_PER_NODE");
}

TEST(DeviceConnections, WarnsBelowWhatIsWanted) {
  setenv(kDeviceConnectionsVariable, "16", 1);
  EXPECT_NE(device_connections_warning(32).find("asks for 32"), std::string::npos);
  EXPECT_EQ(device_connections_warning(12), "");
  unsetenv(kDeviceConnectionsVariable);
  EXPECT_EQ(device_connections_warning(32), "");
}

TEST(DeviceConnections, MpsDaemonFoundByItsPipe) {
  char dir[] = "/tmp/p2pbench-mps-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
  EXPECT_FALSE(mps_daemon_reachable());
  const std::string control = std::string(dir) + "/control";
  ASSERT_EQ(mkfifo(control.c_str(), 0600), 0);
  EXPECT_TRUE(mps_daemon_reachable());
  unlink(control.c_str());
  rmdir(dir);
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
}

// A socket whose daemon listens is reachable; the socket a daemon left behind when it quit is not.
TEST(DeviceConnections, MpsDaemonFoundByItsSocketOnlyWhileItListens) {
  char dir[] = "/tmp/p2pbench-mps-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
  const std::string control = std::string(dir) + "/control";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, control.c_str(), control.size() + 1);
  const int daemon = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(daemon, 0);
  ASSERT_EQ(bind(daemon, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(daemon, 4), 0);
  EXPECT_TRUE(mps_daemon_reachable());
  close(daemon);  // the file stays, as a quit daemon's does
  struct stat st {};
  ASSERT_EQ(stat(control.c_str(), &st), 0);
  EXPECT_FALSE(mps_daemon_reachable());
  unlink(control.c_str());
  rmdir(dir);
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
}

}  // namespace
}  // namespace p2pbench
