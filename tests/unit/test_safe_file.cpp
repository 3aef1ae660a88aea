// The results file and shared-memory sizing under hostile conditions: planted symlinks, missing,
// read-only and full directories. Conditions that need another user or a resource limit run in
// a forked child, so the test process itself keeps its privileges and limits.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "child_process.hpp"
#include "common/errors.hpp"
#include "common/safe_file.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {
namespace {

// Whether every directory from `path` up to / lets other users through (o+x): the tests that drop
// to "nobody" must reach their directory.
bool others_can_reach(const std::string& path) {
  struct stat st {};
  if (stat("/", &st) != 0 || !(st.st_mode & S_IXOTH)) return false;
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string dir = end == std::string::npos ? path : path.substr(0, end);
    if (stat(dir.c_str(), &st) != 0 || !(st.st_mode & S_IXOTH)) return false;
    if (end == std::string::npos) return true;
  }
}

// The first of the test temporary directory, /var/tmp and /dev/shm that every user can reach
// (a machine may keep /tmp private to root); else the test temporary directory.
std::string shared_temp_dir() {
  for (const std::string& dir : {::testing::TempDir(), std::string("/var/tmp/"), std::string("/dev/shm/")})
    if (others_can_reach(dir)) return dir;
  return ::testing::TempDir();
}

// A fresh directory per test, readable by every user (the read-only test drops to "nobody").
class SafeFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = shared_temp_dir() + "/safe-file-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    chmod(dir_.c_str(), 0755);
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::set<std::string> entries() const {
    std::set<std::string> out;
    if (DIR* d = opendir(dir_.c_str())) {
      while (dirent* e = readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.insert(e->d_name);
      closedir(d);
    }
    return out;
  }
  std::string dir_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_plain(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Runs `body` in a forked child (testing::run_in_child). `as_nobody`: drop root to uid/gid
// 65534 first (as root, permission bits do not stop writes).
int in_child(const std::function<bool()>& body, bool as_nobody = false) {
  return testing::run_in_child(body, [as_nobody] {
    return !(as_nobody && geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0));
  });
}

// A file-size limit of `bytes`, with SIGXFSZ ignored so writes fail with EFBIG instead of
// killing the process: how a full disk looks to the writer, without needing a mount.
void limit_file_size(rlim_t bytes) {
  std::signal(SIGXFSZ, SIG_IGN);
  const rlimit limit{bytes, bytes};
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(5);
}

template <typename Error>
bool throws_mentioning(const std::function<void()>& call, std::initializer_list<std::string> needles) {
  try {
    call();
  } catch (const Error& e) {
    for (const auto& n : needles)
      if (std::string(e.what()).find(n) == std::string::npos) return false;
    return true;
  }
  return false;
}

TEST_F(SafeFile, ReplacesTheFileAndLeavesNoTemporary) {
  write_plain(path("r.json"), "old");
  write_file_atomically(path("r.json"), "new text\n");
  EXPECT_EQ(read_all(path("r.json")), "new text\n");
  write_file_atomically(path("r.json"), "checkpoint\n", /*durable=*/false);
  EXPECT_EQ(read_all(path("r.json")), "checkpoint\n");
  EXPECT_EQ(entries(), std::set<std::string>{"r.json"});
  struct stat st {};
  ASSERT_EQ(stat(path("r.json").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IRUSR, 0u);
  EXPECT_EQ(st.st_mode & S_IWOTH, 0u);
}

TEST_F(SafeFile, SymlinkAtTheOutputIsReplacedNotWrittenThrough) {
  write_plain(path("victim"), "precious");
  ASSERT_EQ(symlink(path("victim").c_str(), path("r.json").c_str()), 0);
  write_file_atomically(path("r.json"), "results");
  EXPECT_EQ(read_all(path("victim")), "precious");
  struct stat st {};
  ASSERT_EQ(lstat(path("r.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(read_all(path("r.json")), "results");
}

TEST_F(SafeFile, SymlinksPlantedAtGuessableTemporaryNamesAreNotFollowed) {
  // The old writer used "<path>.tmp.<pid>" opened without O_EXCL: a link planted there
  // redirected the write. The temporary is now an mkstemp name: nothing planted is opened.
  write_plain(path("victim"), "precious");
  const std::string planted[] = {path("r.json.tmp." + std::to_string(getpid())), path(".r.json.tmp.XXXXXX"),
                                 path(".p2pbench-write-probe")};
  for (const auto& p : planted) ASSERT_EQ(symlink(path("victim").c_str(), p.c_str()), 0);
  write_file_atomically(path("r.json"), "results");
  check_output_path(path("r.json"));
  EXPECT_EQ(read_all(path("victim")), "precious");
  EXPECT_EQ(read_all(path("r.json")), "results");
  std::set<std::string> expected{"victim", "r.json"};
  for (const auto& p : planted) expected.insert(p.substr(dir_.size() + 1));
  EXPECT_EQ(entries(), expected);  // the planted links untouched, no temporary left
}

TEST_F(SafeFile, MissingDirectoryNamesThePath) {
  const std::string target = path("missing/r.json");
  EXPECT_TRUE(throws_mentioning<RuntimeFailure>([&] { write_file_atomically(target, "x"); }, {target, "No such file"}));
  EXPECT_TRUE(entries().empty());
}

TEST_F(SafeFile, OutputThatIsADirectoryFailsAndLeavesNothing) {
  ASSERT_EQ(mkdir(path("r.json").c_str(), 0755), 0);
  EXPECT_TRUE(throws_mentioning<RuntimeFailure>([&] { write_file_atomically(path("r.json"), "x"); }, {path("r.json")}));
  EXPECT_EQ(entries(), std::set<std::string>{"r.json"});
  EXPECT_THROW(write_file_atomically(path("r.json") + "/", "x"), RuntimeFailure);
}

TEST_F(SafeFile, FullDiskKeepsTheOldFileByteForByteAndNoTemporary) {
  const std::string old = "{\"old\": [1, 2, 3]}\n";
  write_plain(path("r.json"), old);
  const std::string big(1 << 20, 'x');
  const int rc = in_child([&] {
    limit_file_size(64 << 10);
    return throws_mentioning<RuntimeFailure>([&] { write_file_atomically(path("r.json"), big); },
                                             {path("r.json"), "File too large", "unchanged"});
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(read_all(path("r.json")), old);
  EXPECT_EQ(entries(), std::set<std::string>{"r.json"});
}

// A real full file system (ENOSPC, not only the file-size limit above): a 64 KiB tmpfs mounted
// over the test directory in a mount namespace of the child's own.
TEST_F(SafeFile, NoSpaceLeftKeepsTheOldFileAndNoTemporary) {
  const std::string old = "{\"old\": true}\n";
  const std::string big(1 << 20, 'x');
  const int rc = testing::run_in_child(
      [&] {
        write_plain(path("r.json"), old);
        const bool refused = throws_mentioning<RuntimeFailure>([&] { write_file_atomically(path("r.json"), big); },
                                                               {path("r.json"), "No space left on device"});
        return refused && read_all(path("r.json")) == old && entries() == std::set<std::string>{"r.json"};
      },
      [&] {
        return unshare(CLONE_NEWNS) == 0 && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
               mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64k") == 0;
      });
  if (rc == 5) GTEST_SKIP() << "cannot mount a small tmpfs here (needs CAP_SYS_ADMIN in a mount namespace)";
  EXPECT_EQ(rc, 0) << "1: the write did not fail with ENOSPC naming the file, or left the old file changed or a "
                      "temporary behind";
}

// Another user's file in a sticky directory (/tmp) cannot be replaced by a rename: refused up
// front, not after the first case.
TEST_F(SafeFile, AnotherUsersFileInAStickyDirectoryIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: cannot stage another user's file";
  write_plain(path("r.json"), "theirs");  // owned by root (the test runs as root where it can drop)
  ASSERT_EQ(chmod(dir_.c_str(), 01777), 0);
  const int rc = in_child(
      [&] {
        return throws_mentioning<InputError>([&] { check_output_path(path("r.json")); },
                                             {"--output", "belongs to another user", "sticky directory"});
      },
      /*as_nobody=*/true);
  if (rc == 5) GTEST_SKIP() << "running as root and cannot drop to uid 65534 here";
  if (!others_can_reach(dir_)) GTEST_SKIP() << "no temporary directory that uid 65534 can reach: " << dir_;
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(read_all(path("r.json")), "theirs");
}

TEST_F(SafeFile, ReadOnlyDirectoryKeepsTheOldFile) {
  write_plain(path("r.json"), "old");
  ASSERT_EQ(chmod(dir_.c_str(), 0555), 0);
  const int rc = in_child(
      [&] {
        return throws_mentioning<RuntimeFailure>([&] { write_file_atomically(path("r.json"), "new"); },
                                                 {path("r.json"), "Permission denied"}) &&
               throws_mentioning<InputError>([&] { check_output_path(path("r.json")); },
                                             {"--output", path("r.json"), "cannot create files", "Permission denied"});
      },
      /*as_nobody=*/true);
  if (rc == 5) GTEST_SKIP() << "running as root and cannot drop to uid 65534 here (root ignores permission bits)";
  if (!others_can_reach(dir_)) GTEST_SKIP() << "no temporary directory that uid 65534 can reach: " << dir_;
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(read_all(path("r.json")), "old");
  EXPECT_EQ(entries(), std::set<std::string>{"r.json"});
}

TEST_F(SafeFile, JsonWithInvalidUtf8BecomesValidUtf8) {
  const nlohmann::json doc = {{"command_line", std::string("p2pbench --label caf\xe9 \xff\xfe")}};
  write_json_atomically(path("r.json"), doc);
  const std::string text = read_all(path("r.json"));
  const nlohmann::json back = nlohmann::json::parse(text);  // throws on invalid UTF-8
  EXPECT_EQ(back["command_line"], "p2pbench --label caf\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd");
}

TEST_F(SafeFile, CheckOutputPathRefusesWhatCannotBeReplaced) {
  ASSERT_EQ(mkdir(path("sub").c_str(), 0755), 0);
  write_plain(path("victim"), "precious");
  ASSERT_EQ(symlink(path("victim").c_str(), path("link.json").c_str()), 0);
  const std::pair<std::string, std::string> bad[] = {
      {path("sub"), "is a directory"},
      {path("sub") + "/", "names a directory"},
      {path("missing/r.json"), "No such file"},
      {path("victim") + "/r.json", "is not a directory"},
      {path("link.json"), "symbolic link"},
      {"/dev/null", "not a regular file"},
      {"", "empty"},
  };
  for (const auto& [p, why] : bad)
    EXPECT_TRUE(throws_mentioning<InputError>([&] { check_output_path(p); }, {"--output", "\"" + p + "\"", why})) << p;
  check_output_path(path("new.json"));
  check_output_path(path("victim"));  // an existing regular file is fine: it is replaced at the end
  EXPECT_EQ(entries(), (std::set<std::string>{"sub", "victim", "link.json"}));  // the probe left nothing
  EXPECT_EQ(read_all(path("victim")), "precious");
}

TEST_F(SafeFile, ReserveFileSpaceSizesTheFile) {
  const int fd = open(path("space").c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  reserve_file_space(fd, 1 << 20, "a test object");
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  EXPECT_GE(uint64_t(st.st_blocks) * 512, uint64_t(1) << 20);  // real blocks, not a sparse file
  close(fd);
}

TEST_F(SafeFile, ReserveFileSpaceFailsClearlyInAFullSharedMemoryFileSystem) {
  // The same call the start gate and the staging buffers make on a /dev/shm object; the limit
  // makes fallocate fail as a full /dev/shm would (EFBIG here, ENOSPC there).
  const std::string name = "/p2pbench-test-" + std::to_string(getpid());
  const int rc = in_child([&] {
    limit_file_size(4096);
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) return false;
    const bool ok = throws_mentioning<RuntimeFailure>([&] { reserve_file_space(fd, 64 << 20, "the start gate"); },
                                                      {"the start gate", "67108864 bytes", "File too large"});
    close(fd);
    shm_unlink(name.c_str());
    return ok;
  });
  EXPECT_EQ(rc, 0);
  const int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  EXPECT_TRUE(throws_mentioning<RuntimeFailure>([&] { reserve_file_space(dir_fd, 4096, "a directory"); }, {"a directory"}));
  close(dir_fd);
}

}  // namespace
}  // namespace p2pbench
