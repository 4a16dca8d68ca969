#include "base/subprocess.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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

TEST(RunSubprocess, ForwardsSignalsAsAskedAndReportsTheFirst) {
  // The child waits for SIGUSR1 (forwarded from the SIGINT this process
  // sends itself) and exits 7 when it comes.
  const std::string log = ::testing::TempDir() + "/subprocess_forward.log";
  Subprocess p{{"sh", "-c", "trap 'exit 7' USR1; kill -INT $PPID; while :; do sleep 0.05; done"}, log};
  p.own_process_group = true;
  p.forward_signals = {{SIGINT, SIGUSR1}};
  int forwarded = 0;
  absl::StatusOr<int> status = RunSubprocess(p, &forwarded);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, 7) << ReadAll(log);
  EXPECT_EQ(forwarded, SIGINT);
  // The handler is gone afterwards: SIGINT's disposition is the default again.
  struct sigaction now = {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}

TEST(RunSubprocess, TheProgramDiesWithItsParent) {
  // A forked copy of this test runs `sleep` with a parent death signal and
  // is then killed with SIGKILL (no handler can run): sleep must go too.
  const std::string pid_file = ::testing::TempDir() + "/subprocess_pdeath.pid";
  std::remove(pid_file.c_str());
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    Subprocess p{{"sh", "-c", "echo $$ > " + pid_file + ".tmp && mv " + pid_file + ".tmp " +
                                  pid_file + " && exec sleep 60"}};
    p.parent_death_signal = SIGTERM;
    (void)RunSubprocess(p);
    _exit(0);
  }
  pid_t sleeper = 0;
  for (int i = 0; i < 6000 && sleeper == 0; ++i) {  // up to a minute
    std::ifstream in(pid_file);
    if (!(in >> sleeper)) {
      sleeper = 0;
      usleep(10000);
    }
  }
  ASSERT_GT(sleeper, 0) << "the program never started";
  usleep(100000);  // sleep has replaced sh
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 6000 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(sleeper) + "/stat");
    std::string pid, comm, state;
    gone = !(stat >> pid >> comm >> state) || state == "Z";
    if (!gone) usleep(10000);
  }
  EXPECT_TRUE(gone) << "sleep (pid " << sleeper << ") outlived its killed parent";
  if (!gone) kill(sleeper, SIGKILL);
}

TEST(RunSubprocess, SetsTheGivenEnvironmentVariables) {
  const std::string log = ::testing::TempDir() + "/subprocess_env.log";
  setenv("ZOSCHED_SUBPROCESS_TEST_KEPT", "kept", 1);
  setenv("ZOSCHED_SUBPROCESS_TEST_SET", "old", 1);
  Subprocess p{{"sh", "-c",
                "echo \"$ZOSCHED_SUBPROCESS_TEST_KEPT $ZOSCHED_SUBPROCESS_TEST_SET "
                "$ZOSCHED_SUBPROCESS_TEST_NEW\"; env | grep -c ZOSCHED_SUBPROCESS_TEST_SET="},
               log};
  p.environment = {{"ZOSCHED_SUBPROCESS_TEST_SET", "new"}, {"ZOSCHED_SUBPROCESS_TEST_NEW", "x=y"}};
  absl::StatusOr<int> status = RunSubprocess(p);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(ReadAll(log), "kept new x=y\n1\n");  // replaced, not set twice
}

TEST(RunSubprocess, HandsStderrOverLineByLine) {
  const std::string log = ::testing::TempDir() + "/subprocess_lines.log";
  Subprocess p{{"sh", "-c", "echo one >&2; echo out; printf 'two\\n\\nthree' >&2; exit 4"}};
  std::vector<std::string> lines;
  p.stderr_lines = [&lines](absl::string_view line) { lines.emplace_back(line); };
  absl::StatusOr<int> status = RunSubprocess(p);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, 4);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "", "three"}));
}

TEST(RunSubprocess, AProgramThatShouldHaveEndedIsKilledWhenAskedTo) {
  // The program says it is ending, then hangs (a child of its own group
  // too): once give_up says so, the whole group is killed.
  Subprocess p{{"sh", "-c", "echo ending >&2; sleep 300 & sleep 300"}};
  p.own_process_group = true;
  bool said_ending = false;
  int asked = 0;
  p.stderr_lines = [&said_ending](absl::string_view line) { said_ending |= line == "ending"; };
  p.give_up = [&] { return said_ending && ++asked >= 3; };  // about 0.3 s after the line
  absl::StatusOr<int> status = RunSubprocess(p);
  EXPECT_TRUE(absl::IsAborted(status.status())) << status.status();
  EXPECT_TRUE(absl::StrContains(status.status().message(), "killed by signal 9")) << status.status();
  EXPECT_EQ(asked, 3);
}

TEST(RunSubprocess, AProgramWhoseStderrIsReadOutlivesTheReader) {
  // A forked copy of this test reads the program's stderr and is killed
  // (SIGKILL); the program then writes to its stderr, whose reader is gone:
  // it must carry on (EPIPE), not die of SIGPIPE.
  const std::string dir = ::testing::TempDir() + "/subprocess_reader";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  const pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    Subprocess p{{"sh", "-c",
                  "touch " + dir + "/started; while [ ! -e " + dir + "/go ]; do sleep 0.01; done; "
                  "echo after >&2; touch " + dir + "/survived"}};
    p.stderr_lines = [](absl::string_view) {};
    (void)RunSubprocess(p);
    _exit(0);
  }
  auto exists = [&dir](const char* name) {
    return std::ifstream(dir + "/" + name).good();
  };
  for (int i = 0; i < 6000 && !exists("started"); ++i) usleep(10000);  // up to a minute
  ASSERT_TRUE(exists("started")) << "the program never started";
  kill(reader, SIGKILL);
  waitpid(reader, nullptr, 0);
  std::ofstream(dir + "/go").put('\n');
  for (int i = 0; i < 6000 && !exists("survived"); ++i) usleep(10000);
  EXPECT_TRUE(exists("survived")) << "the program died writing to a pipe nobody reads";
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
