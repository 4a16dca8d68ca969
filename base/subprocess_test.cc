#include "base/subprocess.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace zosched {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RunSubprocess, ReturnsTheExitStatus) {
  absl::StatusOr<int> status = RunSubprocess({{"true"}});
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, 0);
  status = RunSubprocess({{"sh", "-c", "exit 3"}});
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, 3);
}

TEST(RunSubprocess, SendsStdoutAndStderrToTheOutputFile) {
  const std::string log = ::testing::TempDir() + "/subprocess_test.log";
  Subprocess p{{"sh", "-c", "echo out; echo err >&2; cat"}, log, /*stdin_from_dev_null=*/true};
  absl::StatusOr<int> status = RunSubprocess(p);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, 0);
  EXPECT_EQ(ReadAll(log), "out\nerr\n");  // and `cat` read an empty stdin
}

TEST(RunSubprocess, PassesArgumentsUnquoted) {
  const std::string log = ::testing::TempDir() + "/subprocess_args.log";
  absl::StatusOr<int> status =
      RunSubprocess({{"printf", "%s|", "a b", "'c'", "$HOME"}, log});
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(ReadAll(log), "a b|'c'|$HOME|");
}

TEST(RunSubprocess, AMissingProgramIsNotFound) {
  absl::StatusOr<int> status = RunSubprocess({{"zosched-no-such-program"}});
  EXPECT_EQ(status.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.status().message(), "zosched-no-such-program: not found");
}

TEST(RunSubprocess, ASignalIsReported) {
  absl::StatusOr<int> status = RunSubprocess({{"sh", "-c", "kill -TERM $$"}});
  EXPECT_EQ(status.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(status.status().message(), "sh was killed by signal 15 (TERM)");
}

TEST(RunSubprocess, AnEmptyArgvIsAnError) {
  EXPECT_EQ(RunSubprocess({}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ThisProgramPath, IsAnAbsolutePathToThisTest) {
  absl::StatusOr<std::string> path = ThisProgramPath();
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ((*path)[0], '/');
  EXPECT_NE(path->find("subprocess_test"), std::string::npos) << *path;
}

}  // namespace
}  // namespace zosched
