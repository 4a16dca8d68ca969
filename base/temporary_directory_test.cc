#include "base/temporary_directory.h"

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(TemporaryDirectoryTest, MakesAnEmptyDirectoryUnderTmpdirEachTime) {
  const std::string tmpdir = ::testing::TempDir();
  setenv("TMPDIR", tmpdir.c_str(), 1);
  absl::StatusOr<std::string> a = MakeTemporaryDirectory("zosched-test", "a test");
  absl::StatusOr<std::string> b = MakeTemporaryDirectory("zosched-test", "a test");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(std::filesystem::equivalent(std::filesystem::path(*a).parent_path(), tmpdir));
  EXPECT_TRUE(std::filesystem::is_empty(*a));
  std::filesystem::remove_all(*a);
  std::filesystem::remove_all(*b);
}

TEST(TemporaryDirectoryTest, SaysWhatItWasForWhenTmpdirCannotBeWritten) {
  setenv("TMPDIR", "/nonexistent/zosched", 1);
  absl::StatusOr<std::string> made = MakeTemporaryDirectory("zosched-test", "the test's files");
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("cannot make a directory for the test's files "
                                         "(/nonexistent/zosched/zosched-test."),
            std::string::npos)
      << made.status();
  EXPECT_NE(made.status().message().find("set TMPDIR"), std::string::npos);
}

}  // namespace
}  // namespace zosched
