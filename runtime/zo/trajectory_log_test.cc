#include "runtime/zo/trajectory_log.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "runtime/dtype/float_bits.h"

namespace zosched {
namespace {

// A fresh path under the test's temporary directory (never the working
// directory).
std::string TempPath(const std::string& name) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/", name);
  std::remove(path.c_str());
  return path;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(TrajectoryLog, WritesHeaderAndOneLinePerStep) {
  const std::string path = TempPath("basic.log");
  {
    auto writer = TrajectoryWriter::Open(path, 1234);
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_FALSE((*writer)->last_step().has_value());
    ASSERT_TRUE((*writer)->Append(0, 18446744073709551615ull, 0.5f, 1e-6f).ok());
    // Flushed after every step: visible before the writer closes.
    EXPECT_EQ(ReadFile(path),
              "# zosched trajectory v1 base_seed=1234\n"
              "0 18446744073709551615 0.5 9.99999997e-07\n");
    ASSERT_TRUE((*writer)->Append(1, 7, -12.25f, 1e-6f).ok());
  }
  auto entries = ReadTrajectory(path, 1234);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].step, 0);
  EXPECT_EQ((*entries)[0].seed, 18446744073709551615ull);
  EXPECT_EQ((*entries)[0].g, 0.5f);
  EXPECT_EQ((*entries)[0].lr, 1e-6f);
  EXPECT_EQ((*entries)[1].step, 1);
  EXPECT_EQ((*entries)[1].seed, 7u);
  EXPECT_EQ((*entries)[1].g, -12.25f);
}

// "%.9g" round-trips every finite float exactly: random bit patterns plus
// the extremes (subnormals, FLT_MAX, -0).
TEST(TrajectoryLog, FloatsRoundTripBitwise) {
  const std::string path = TempPath("roundtrip.log");
  std::vector<float> values = {0.0f,
                               -0.0f,
                               std::numeric_limits<float>::denorm_min(),
                               -std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::min(),
                               std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::max(),
                               1e-7f,
                               0.1f,
                               1.0f / 3.0f};
  uint64_t state = 0x9e3779b97f4a7c15ull;
  while (values.size() < 20000) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const float f = FromBits(static_cast<uint32_t>(state >> 32));
    if (std::isfinite(f)) values.push_back(f);
  }
  {
    auto writer = TrajectoryWriter::Open(path, 5);
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (size_t i = 0; i + 1 < values.size(); i += 2) {
      ASSERT_TRUE((*writer)->Append(i / 2, i, values[i], values[i + 1]).ok());
    }
  }
  auto entries = ReadTrajectory(path);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), values.size() / 2);
  for (size_t i = 0; i < entries->size(); ++i) {
    ASSERT_EQ(Bits((*entries)[i].g), Bits(values[2 * i])) << "entry " << i;
    ASSERT_EQ(Bits((*entries)[i].lr), Bits(values[2 * i + 1])) << "entry " << i;
  }
}

TEST(TrajectoryLog, ReopeningAppendsAndContinuesTheSteps) {
  const std::string path = TempPath("reopen.log");
  {
    auto writer = TrajectoryWriter::Open(path, 9);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(0, 100, 1.0f, 1e-7f).ok());
    ASSERT_TRUE((*writer)->Append(1, 101, 2.0f, 1e-7f).ok());
  }
  {
    auto writer = TrajectoryWriter::Open(path, 9);
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_EQ((*writer)->last_step(), 1);
    absl::Status skipped = (*writer)->Append(3, 103, 3.0f, 1e-7f);
    EXPECT_EQ(skipped.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(skipped.message().find("does not follow the last logged step 1"), std::string::npos)
        << skipped;
    ASSERT_TRUE((*writer)->Append(2, 102, 3.0f, 1e-7f).ok());
  }
  auto entries = ReadTrajectory(path, 9);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[2].seed, 102u);
  // One header only.
  EXPECT_EQ(ReadFile(path).find("# zosched", 1), std::string::npos);
}

TEST(TrajectoryLog, ReopeningWithAnotherBaseSeedFails) {
  const std::string path = TempPath("other_seed.log");
  ASSERT_TRUE(TrajectoryWriter::Open(path, 1).ok());
  auto writer = TrajectoryWriter::Open(path, 2);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(writer.status().message().find(path + ":1: header base_seed=1 does not match"),
            std::string::npos)
      << writer.status();
}

TEST(TrajectoryLog, AppendRejectsNonFiniteAndNegativeSteps) {
  const std::string path = TempPath("nonfinite.log");
  auto writer = TrajectoryWriter::Open(path, 1);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->Append(-1, 1, 1.0f, 1.0f).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*writer)->Append(0, 1, std::nanf(""), 1.0f).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*writer)->Append(0, 1, 1.0f, INFINITY).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE((*writer)->last_step().has_value());
  // A log may start at any step (e.g. after a checkpoint), then continues.
  EXPECT_TRUE((*writer)->Append(500, 1, 1.0f, 1.0f).ok());
  EXPECT_TRUE((*writer)->Append(501, 1, 1.0f, 1.0f).ok());
}

TEST(TrajectoryLog, MissingFileIsNotFound) {
  auto entries = ReadTrajectory(TempPath("does_not_exist.log"));
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.status().code(), absl::StatusCode::kNotFound);
}

TEST(TrajectoryLog, UnwritablePathIsPermissionDenied) {
  auto writer = TrajectoryWriter::Open(TempPath("no_such_dir") + "/x.log", 1);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kPermissionDenied);
}

struct BadFile {
  const char* name;
  const char* text;
  const char* error;  // expected substring, after "PATH:"
};

TEST(TrajectoryLog, MalformedFilesNameFileAndLine) {
  const std::string header = "# zosched trajectory v1 base_seed=3\n";
  const std::vector<BadFile> cases = {
      {"empty", "", ":1: missing header: the file is empty"},
      {"no_header", "0 1 0.5 1e-06\n", ":1: missing header"},
      {"old_version", "# zosched trajectory v0 base_seed=3\n", ":1: missing header"},
      {"bad_base_seed", "# zosched trajectory v1 base_seed=-3\n", ":1: malformed header"},
      {"three_fields", "0 1 0.5\n", ":2: expected 4 space-separated fields"},
      {"double_space", "0 1  0.5 1e-06\n", ":2: expected 4 space-separated fields"},
      {"bad_step", "x 1 0.5 1e-06\n", ":2: step \"x\""},
      {"negative_step", "-1 1 0.5 1e-06\n", ":2: step \"-1\""},
      {"seed_overflow", "0 18446744073709551616 0.5 1e-06\n", ":2: seed \"18446744073709551616\""},
      {"bad_g", "0 1 abc 1e-06\n", ":2: g \"abc\" is not a finite float"},
      {"nan_g", "0 1 nan 1e-06\n", ":2: g \"nan\""},
      {"inf_lr", "0 1 0.5 1e39\n", ":2: lr \"1e39\" is not a finite float"},
      {"crlf", "0 1 0.5 1e-06\r\n", ":2: lr \"1e-06\r\""},
      {"gap", "0 1 0.5 1e-06\n2 1 0.5 1e-06\n", ":3: step 2 does not follow step 0"},
      {"repeat", "4 1 0.5 1e-06\n4 1 0.5 1e-06\n", ":3: step 4 does not follow step 4"},
      {"cut_short", "0 1 0.5 1e-06\n1 2 0.2", ":3: last line does not end with a newline"},
      {"blank_line", "0 1 0.5 1e-06\n\n", ":3: expected 4 space-separated fields"},
      // The largest int64 step, then any: comparing with last + 1 overflowed
      // (found by fuzz/trajectory_fuzzer's UBSan).
      {"after_int64_max", "9223372036854775807 1 0.5 1e-06\n0 1 0.5 1e-06\n",
       ":3: step 0 does not follow step 9223372036854775807"},
  };
  for (const BadFile& c : cases) {
    const std::string path = TempPath(absl::StrCat("bad_", c.name, ".log"));
    const bool raw =
        absl::string_view(c.name) == "empty" || absl::string_view(c.name) == "no_header" ||
        absl::string_view(c.name) == "old_version" || absl::string_view(c.name) == "bad_base_seed";
    WriteFile(path, raw ? std::string(c.text) : header + c.text);
    auto entries = ReadTrajectory(path);
    ASSERT_FALSE(entries.ok()) << c.name;
    EXPECT_EQ(entries.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(entries.status().message().find(path + c.error), std::string::npos)
        << c.name << ": " << entries.status();
  }
}

TEST(TrajectoryLog, ParsesFromMemoryNamingTheGivenPath) {
  const std::string text = "# zosched trajectory v1 base_seed=3\n5 9 0.5 1e-06\n6 10 -2 1e-06\n";
  auto entries = ParseTrajectory(text, "mem.log", 3);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[1].step, 6);
  EXPECT_EQ((*entries)[1].seed, 10u);
  EXPECT_EQ((*entries)[1].g, -2.0f);
  const auto wrong_seed = ParseTrajectory(text, "mem.log", 4);
  EXPECT_EQ(wrong_seed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_seed.status().message().find("mem.log:1: header base_seed=3"), std::string::npos)
      << wrong_seed.status();
}

TEST(TrajectoryLog, AppendAfterTheLargestStepFails) {
  const std::string path = TempPath("int64_max.log");
  WriteFile(path, "# zosched trajectory v1 base_seed=3\n9223372036854775807 1 0.5 1e-06\n");
  auto writer = TrajectoryWriter::Open(path, 3);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const absl::Status s = (*writer)->Append(0, 1, 0.5f, 1e-6f);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("does not follow the last logged step 9223372036854775807"),
            std::string::npos)
      << s;
}

TEST(TrajectoryLog, HeaderOnlyIsAnEmptyTrajectory) {
  const std::string path = TempPath("header_only.log");
  WriteFile(path, "# zosched trajectory v1 base_seed=3\n");
  auto entries = ReadTrajectory(path, 3);
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_TRUE(entries->empty());
  EXPECT_EQ(TrajectoryHeader(3), "# zosched trajectory v1 base_seed=3");
}

}  // namespace
}  // namespace zosched
