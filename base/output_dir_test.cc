#include "base/output_dir.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(OutputDir, FlagWinsElseTheWorkspaceOut) {
  setenv("BUILD_WORKSPACE_DIRECTORY", "/ws", 1);
  unsetenv("BUILD_WORKING_DIRECTORY");
  EXPECT_EQ(OutputDir("", "study"), "/ws/out/study");
  EXPECT_EQ(OutputDir("/abs/dir", "study"), "/abs/dir");
  unsetenv("BUILD_WORKSPACE_DIRECTORY");
  EXPECT_EQ(OutputDir("", "study"), "./out/study");
}

TEST(MakeDirectories, CreatesParentsAndWritesFiles) {
  const std::string dir = ::testing::TempDir() + "/a/b/c";
  ASSERT_TRUE(MakeDirectories(dir).ok());
  ASSERT_TRUE(MakeDirectories(dir).ok());  // idempotent
  ASSERT_TRUE(WriteFile(dir + "/x.txt", "hello").ok());
  std::ifstream in(dir + "/x.txt");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "hello");
  EXPECT_FALSE(WriteFile("/nonexistent/dir/x.txt", "x").ok());
  EXPECT_FALSE(MakeDirectories("/proc/zosched-cannot").ok());
}

TEST(DirectoryHasEntries, AbsentEmptyFullAndNotADirectory) {
  const std::string dir = ::testing::TempDir() + "/has_entries";
  EXPECT_FALSE(*DirectoryHasEntries(dir));
  ASSERT_TRUE(MakeDirectories(dir).ok());
  EXPECT_FALSE(*DirectoryHasEntries(dir));
  ASSERT_TRUE(WriteFile(dir + "/x", "x").ok());
  EXPECT_TRUE(*DirectoryHasEntries(dir));
  EXPECT_EQ(DirectoryHasEntries(dir + "/x").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace zosched
