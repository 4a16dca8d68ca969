#include "base/command_line.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(int32_t, steps, 5, "steps to run");
ABSL_FLAG(double, lr, 1e-3, "learning rate");
ABSL_FLAG(bool, slicing, true, "sliced transfers");
ABSL_FLAG(std::string, out, "", "output file");
ABSL_FLAG(std::vector<std::string>, devices, {}, "device names");

namespace zosched {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class CommandLineTest : public ::testing::Test {
 protected:
  // Parses "tool ARGS..." for a tool taking the positional arguments `names`.
  absl::StatusOr<CommandLine> Parse(std::vector<std::string> args, const std::string& names = "") {
    args.insert(args.begin(), "tool");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return ParseCommandLineStrict(static_cast<int>(argv.size()), argv.data(),
                                  {"tool", names, "Does things."});
  }

  // The error message for "tool ARGS...", which must be refused.
  std::string Error(const std::vector<std::string>& args, const std::string& names = "") {
    const absl::StatusOr<CommandLine> line = Parse(args, names);
    EXPECT_FALSE(line.ok()) << "accepted";
    if (line.ok()) return "";
    EXPECT_EQ(line.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(line.status().message());
  }

  absl::FlagSaver restore_;
};

TEST_F(CommandLineTest, SetsFlagsInAbseilsForms) {
  const absl::StatusOr<CommandLine> line =
      Parse({"--steps=7", "--lr", "-0.5", "--noslicing", "--out=", "-devices=a,b"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_FALSE(line->help);
  EXPECT_TRUE(line->args.empty());
  EXPECT_EQ(absl::GetFlag(FLAGS_steps), 7);
  EXPECT_EQ(absl::GetFlag(FLAGS_lr), -0.5);
  EXPECT_FALSE(absl::GetFlag(FLAGS_slicing));
  EXPECT_EQ(absl::GetFlag(FLAGS_devices), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(GivenOnCommandLine(absl::GetFlagReflectionHandle(FLAGS_steps)));
  EXPECT_TRUE(GivenOnCommandLine(absl::GetFlagReflectionHandle(FLAGS_out)));
}

TEST_F(CommandLineTest, FlagsLeftOutAreNotGiven) {
  ASSERT_TRUE(Parse({"--slicing=false"}).ok());
  EXPECT_FALSE(GivenOnCommandLine(absl::GetFlagReflectionHandle(FLAGS_steps)));
  EXPECT_EQ(absl::GetFlag(FLAGS_steps), 5);
}

TEST_F(CommandLineTest, PositionalArgumentsAnywhereAndAfterDoubleDash) {
  const absl::StatusOr<CommandLine> line =
      Parse({"a", "--slicing", "b", "--", "--steps=3"}, "A B C");
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->args, (std::vector<std::string>{"a", "b", "--steps=3"}));
  EXPECT_EQ(absl::GetFlag(FLAGS_steps), 5);
  EXPECT_TRUE(absl::GetFlag(FLAGS_slicing));
}

TEST_F(CommandLineTest, HelpWinsAndSetsNothing) {
  for (const char* help : {"--help", "-h", "--helpfull", "-help"}) {
    const absl::StatusOr<CommandLine> line = Parse({"--steps=9", "--stepz", help, "x"});
    ASSERT_TRUE(line.ok()) << help << ": " << line.status();
    EXPECT_TRUE(line->help) << help;
    EXPECT_EQ(absl::GetFlag(FLAGS_steps), 5) << help;
  }
  // After "--" it is an argument like any other.
  const absl::StatusOr<CommandLine> line = Parse({"--", "--help"}, "A");
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_FALSE(line->help);
  EXPECT_EQ(line->args, (std::vector<std::string>{"--help"}));
}

TEST_F(CommandLineTest, UnknownFlagNamesTheNearestOne) {
  EXPECT_EQ(Error({"--stepz=3"}), "unknown flag --stepz (did you mean --steps?)");
  EXPECT_EQ(Error({"-slicng"}), "unknown flag -slicng (did you mean --slicing?)");
  EXPECT_EQ(Error({"--quantum"}), "unknown flag --quantum");
  EXPECT_EQ(Error({"--version"}), "unknown flag --version");
}

TEST_F(CommandLineTest, AbseilsOwnFlagsAreRefused) {
  EXPECT_EQ(Error({"--flagfile=f"}),
            "--flagfile is not taken: give every flag on the command line itself");
  EXPECT_THAT(Error({"--undefok=steps"}), HasSubstr("--undefok is not taken"));
}

TEST_F(CommandLineTest, FlagGivenTwiceIsRefused) {
  EXPECT_EQ(Error({"--steps=5", "--steps", "7"}), "--steps given twice (5 and 7): give it once");
  EXPECT_EQ(Error({"--slicing", "--noslicing"}),
            "--slicing given twice (true and false): give it once");
}

TEST_F(CommandLineTest, ValueThatDoesNotParseIsRefused) {
  EXPECT_EQ(Error({"--steps=abc"}), "--steps=abc is not a valid int32 (default 5)");
  EXPECT_EQ(Error({"--steps=99999999999"}), "--steps=99999999999 is not a valid int32 (default 5)");
  EXPECT_EQ(Error({"--lr", "fast"}), "--lr=fast is not a valid number (default 0.001)");
  EXPECT_EQ(Error({"--slicing=maybe"}), "--slicing=maybe is not a valid bool: give true or false");
}

TEST_F(CommandLineTest, FlagWithoutItsValueIsRefused) {
  EXPECT_EQ(Error({"--out"}), "--out lacks its value: give --out=VALUE (string, default \"\")");
  EXPECT_EQ(Error({"--out", "--steps=3"}),
            "--out lacks its value (--steps=3 after it is not one): give --out=VALUE (string, "
            "default \"\")");
  EXPECT_THAT(Error({"--steps", "--"}), HasSubstr("--steps lacks its value"));
  EXPECT_THAT(Error({"--slicing="}), HasSubstr("--slicing= lacks its value"));
}

TEST_F(CommandLineTest, NegativeFormsOnlyForBoolsAndWithoutValue) {
  EXPECT_EQ(Error({"--nosteps"}),
            "--nosteps: --steps is not a bool flag; give --steps=VALUE (int32)");
  EXPECT_THAT(Error({"--noslicing=true"}), HasSubstr("--noslicing takes no value"));
}

TEST_F(CommandLineTest, WrongNumberOfPositionalArgumentsIsRefused) {
  EXPECT_EQ(Error({"x"}), "unexpected argument 'x': tool takes flags only (--name=VALUE)");
  EXPECT_EQ(Error({"a"}, "OLD NEW"), "missing NEW (usage: tool [flags] OLD NEW)");
  EXPECT_EQ(Error({}, "OLD NEW"), "missing OLD and NEW (usage: tool [flags] OLD NEW)");
  EXPECT_EQ(Error({"a", "b", "c"}, "OLD NEW"),
            "unexpected argument 'c' (usage: tool [flags] OLD NEW)");
  // A bool's value written after a space is an argument: say so.
  EXPECT_THAT(Error({"--slicing", "false"}),
              HasSubstr("unexpected argument 'false' after --slicing (a bool flag takes its "
                        "value as --slicing=true|false)"));
}

TEST_F(CommandLineTest, RefusedLineSetsNoFlag) {
  Error({"--steps=9", "--lr=0.5", "stray"});
  EXPECT_EQ(absl::GetFlag(FLAGS_steps), 5);
  EXPECT_EQ(absl::GetFlag(FLAGS_lr), 1e-3);
  EXPECT_FALSE(GivenOnCommandLine(absl::GetFlagReflectionHandle(FLAGS_steps)));
}

TEST_F(CommandLineTest, HelpListsEveryFlagOfTheProgramByFile) {
  const std::string help = HelpText({"tool", "FILE", "Does things."});
  EXPECT_THAT(help, HasSubstr("usage: tool [flags] FILE\n\nDoes things.\n"));
  EXPECT_THAT(help, HasSubstr("\nflags of base/command_line_test.cc:\n"
                              "  --devices (comma-separated list, default \"\")\n"
                              "      device names\n"
                              "  --lr (number, default 0.001)\n"
                              "      learning rate\n"
                              "  --out (string, default \"\")\n"
                              "      output file\n"
                              "  --slicing (bool, default true)\n"
                              "      sliced transfers\n"
                              "  --steps (int32, default 5)\n"
                              "      steps to run\n"));
  EXPECT_THAT(help, HasSubstr("Exit status: 0 on success; 2 for bad usage or input"));
  EXPECT_THAT(help, Not(HasSubstr("flagfile")));
}

TEST_F(CommandLineTest, ExitStatusSaysWhoseFaultItIs) {
  EXPECT_EQ(ExitStatusFor(absl::InvalidArgumentError("bad flag")), 2);
  EXPECT_EQ(ExitStatusFor(absl::NotFoundError("no file")), 2);
  EXPECT_EQ(ExitStatusFor(absl::ResourceExhaustedError("plan does not fit")), 2);
  EXPECT_EQ(ExitStatusFor(absl::FailedPreconditionError("no CUDA build")), 2);
  EXPECT_EQ(ExitStatusFor(absl::InternalError("a rank died")), 1);
  EXPECT_EQ(ExitStatusFor(absl::DataLossError("write failed")), 1);
  EXPECT_EQ(ExitStatusFor(absl::AbortedError("killed")), 1);
}

}  // namespace
}  // namespace zosched
