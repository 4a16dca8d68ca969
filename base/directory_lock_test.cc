#include "base/directory_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace zosched {
namespace {

std::string NewDirectory(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name;
  mkdir(path.c_str(), 0755);
  return path;
}

// Whether another process can lock `path` now (a lock held by this process
// through another descriptor would also refuse it, but a forked child is
// the other run a user would start).
bool AnotherProcessCanLock(const std::string& path) {
  const pid_t child = fork();
  if (child == 0) _exit(DirectoryLock::Acquire(path, "--out_dir").ok() ? 0 : 1);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(DirectoryLock, KeepsOthersOutUntilReleased) {
  const std::string path = NewDirectory("locked");
  {
    absl::StatusOr<DirectoryLock> lock = DirectoryLock::Acquire(path, "--out_dir");
    ASSERT_TRUE(lock.ok()) << lock.status();
    EXPECT_FALSE(AnotherProcessCanLock(path));
    // A second lock of the same directory is refused, naming it and the way out.
    absl::StatusOr<DirectoryLock> second = DirectoryLock::Acquire(path, "--out_dir");
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(second.status().message().find(path + " (--out_dir) is in use by another process"),
              std::string::npos)
        << second.status();
    EXPECT_NE(second.status().message().find("choose another --out_dir"), std::string::npos);
    // Moved, it stays held.
    DirectoryLock moved = std::move(*lock);
    EXPECT_FALSE(AnotherProcessCanLock(path));
  }
  EXPECT_TRUE(AnotherProcessCanLock(path));
}

TEST(DirectoryLock, AProgramStartedUnderTheLockHoldsItAfterThisProcessLetsGo) {
  const std::string path = NewDirectory("inherited");
  const std::string flag = ::testing::TempDir() + "/inherited.go";
  unlink(flag.c_str());
  pid_t program = 0;
  {
    absl::StatusOr<DirectoryLock> lock = DirectoryLock::Acquire(path, "--out_dir");
    ASSERT_TRUE(lock.ok()) << lock.status();
    program = fork();
    if (program == 0) {
      // Like mpirun started by the launcher: an exec'd program that
      // inherits the descriptor and runs until told to stop.
      execlp("sh", "sh", "-c", ("while [ ! -e " + flag + " ]; do sleep 0.01; done").c_str(),
             nullptr);
      _exit(127);
    }
  }
  EXPECT_FALSE(AnotherProcessCanLock(path));
  close(open(flag.c_str(), O_CREAT | O_WRONLY, 0644));
  waitpid(program, nullptr, 0);
  EXPECT_TRUE(AnotherProcessCanLock(path));
}

TEST(DirectoryLock, AMissingDirectoryIsNamed) {
  absl::StatusOr<DirectoryLock> lock =
      DirectoryLock::Acquire(::testing::TempDir() + "/no/such/dir", "--out_dir");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(lock.status().message().find("no/such/dir (--out_dir)"), std::string::npos)
      << lock.status();
}

}  // namespace
}  // namespace zosched
