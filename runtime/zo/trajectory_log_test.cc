#include "runtime/zo/trajectory_log.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
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

// One direction (q = 1): the step's seed and g.
std::vector<DirectionGradient> One(uint64_t seed, float g) { return {DirectionGradient{seed, g}}; }

TEST(TrajectoryLog, WritesHeaderAndOneLinePerStep) {
  const std::string path = TempPath("basic.log");
  {
    auto writer = TrajectoryWriter::Open(path, 1234, 1);
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_FALSE((*writer)->last_step().has_value());
    EXPECT_EQ((*writer)->directions(), 1);
    ASSERT_TRUE((*writer)->Append(0, One(18446744073709551615ull, 0.5f), 1e-6f).ok());
    // Flushed after every step: visible before the writer closes.
    EXPECT_EQ(ReadFile(path),
              "# zosched trajectory v1 base_seed=1234\n"
              "0 18446744073709551615 0.5 9.99999997e-07\n");
    ASSERT_TRUE((*writer)->Append(1, One(7, -12.25f), 1e-6f).ok());
  }
  auto entries = ReadTrajectory(path, 1234, 1);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].step, 0);
  ASSERT_EQ((*entries)[0].directions.size(), 1u);
  EXPECT_EQ((*entries)[0].directions[0].seed, 18446744073709551615ull);
  EXPECT_EQ((*entries)[0].directions[0].g, 0.5f);
  EXPECT_EQ((*entries)[0].lr, 1e-6f);
  EXPECT_EQ((*entries)[1].step, 1);
  ASSERT_EQ((*entries)[1].directions.size(), 1u);
  EXPECT_EQ((*entries)[1].directions[0].seed, 7u);
  EXPECT_EQ((*entries)[1].directions[0].g, -12.25f);
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
    auto writer = TrajectoryWriter::Open(path, 5, 1);
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (size_t i = 0; i + 1 < values.size(); i += 2) {
      ASSERT_TRUE((*writer)->Append(i / 2, One(i, values[i]), values[i + 1]).ok());
    }
  }
  auto entries = ReadTrajectory(path);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), values.size() / 2);
  for (size_t i = 0; i < entries->size(); ++i) {
    ASSERT_EQ(Bits((*entries)[i].directions[0].g), Bits(values[2 * i])) << "entry " << i;
    ASSERT_EQ(Bits((*entries)[i].lr), Bits(values[2 * i + 1])) << "entry " << i;
  }
}

TEST(TrajectoryLog, ReopeningAppendsAndContinuesTheSteps) {
  const std::string path = TempPath("reopen.log");
  {
    auto writer = TrajectoryWriter::Open(path, 9, 1);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(0, One(100, 1.0f), 1e-7f).ok());
    ASSERT_TRUE((*writer)->Append(1, One(101, 2.0f), 1e-7f).ok());
  }
  {
    auto writer = TrajectoryWriter::Open(path, 9, 1);
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_EQ((*writer)->last_step(), 1);
    absl::Status skipped = (*writer)->Append(3, One(103, 3.0f), 1e-7f);
    EXPECT_EQ(skipped.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(skipped.message().find("does not follow the last logged step 1"), std::string::npos)
        << skipped;
    ASSERT_TRUE((*writer)->Append(2, One(102, 3.0f), 1e-7f).ok());
  }
  auto entries = ReadTrajectory(path, 9);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[2].directions[0].seed, 102u);
  // One header only.
  EXPECT_EQ(ReadFile(path).find("# zosched", 1), std::string::npos);
}

TEST(TrajectoryLog, ReopeningWithAnotherBaseSeedFails) {
  const std::string path = TempPath("other_seed.log");
  ASSERT_TRUE(TrajectoryWriter::Open(path, 1, 1).ok());
  auto writer = TrajectoryWriter::Open(path, 2, 1);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(writer.status().message().find(
                path + ":1: header base_seed=1 does not match the run's base_seed=2"),
            std::string::npos)
      << writer.status();
  EXPECT_NE(writer.status().message().find("start a new --out_dir"), std::string::npos)
      << writer.status();
}

TEST(TrajectoryLog, AppendRejectsNonFiniteAndNegativeSteps) {
  const std::string path = TempPath("nonfinite.log");
  auto writer = TrajectoryWriter::Open(path, 1, 1);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->Append(-1, One(1, 1.0f), 1.0f).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*writer)->Append(0, One(1, std::nanf("")), 1.0f).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*writer)->Append(0, One(1, 1.0f), INFINITY).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE((*writer)->last_step().has_value());
  // A log may start at any step (e.g. after a checkpoint), then continues.
  EXPECT_TRUE((*writer)->Append(500, One(1, 1.0f), 1.0f).ok());
  EXPECT_TRUE((*writer)->Append(501, One(1, 1.0f), 1.0f).ok());
}

TEST(TrajectoryLog, MissingFileIsNotFound) {
  auto entries = ReadTrajectory(TempPath("does_not_exist.log"));
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.status().code(), absl::StatusCode::kNotFound);
}

TEST(TrajectoryLog, UnwritablePathIsPermissionDenied) {
  auto writer = TrajectoryWriter::Open(TempPath("no_such_dir") + "/x.log", 1, 1);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kPermissionDenied);
}

struct BadFile {
  const char* name;
  const char* text;
  const char* error;  // expected substring, after "PATH:"
};

// Writes `contents` to `path`: reading it back is refused with c.error.
void ExpectReadRefused(const BadFile& c, const std::string& path, const std::string& contents) {
  WriteFile(path, contents);
  auto entries = ReadTrajectory(path);
  ASSERT_FALSE(entries.ok()) << c.name;
  EXPECT_EQ(entries.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
  EXPECT_NE(entries.status().message().find(path + c.error), std::string::npos)
      << c.name << ": " << entries.status();
}

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
    ExpectReadRefused(c, path, raw ? std::string(c.text) : header + c.text);
  }
}

// n-SPSA (q = 3): the v2 header and 2 + 2q fields a line, read back exactly,
// and a reopened log continues.
TEST(TrajectoryLog, V2RoundTripsEveryDirection) {
  const std::string path = TempPath("v2.log");
  const std::vector<std::vector<DirectionGradient>> steps = {
      {{11, 0.5f}, {18446744073709551615ull, -0.0f}, {13, 1e-7f}},
      {{21, -12.25f}, {22, std::numeric_limits<float>::denorm_min()}, {0, 3.0f}},
      {{31, std::numeric_limits<float>::max()}, {32, 1.0f / 3.0f}, {33, -1.5f}},
  };
  {
    auto writer = TrajectoryWriter::Open(path, 77, 3);
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_EQ((*writer)->directions(), 3);
    ASSERT_TRUE((*writer)->Append(4, steps[0], 1e-6f).ok());
    ASSERT_TRUE((*writer)->Append(5, steps[1], 1e-6f).ok());
    EXPECT_EQ(ReadFile(path),
              "# zosched trajectory v2 base_seed=77 directions=3\n"
              "4 11 0.5 18446744073709551615 -0 13 1.00000001e-07 9.99999997e-07\n"
              "5 21 -12.25 22 1.40129846e-45 0 3 9.99999997e-07\n");
  }
  {
    auto writer = TrajectoryWriter::Open(path, 77, 3);
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_EQ((*writer)->last_step(), 5);
    ASSERT_TRUE((*writer)->Append(6, steps[2], 2e-6f).ok());
  }
  auto entries = ReadTrajectory(path, 77, 3);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 3u);
  for (size_t i = 0; i < entries->size(); ++i) {
    const TrajectoryEntry& e = (*entries)[i];
    EXPECT_EQ(e.step, static_cast<int64_t>(4 + i));
    EXPECT_EQ(Bits(e.lr), Bits(i == 2 ? 2e-6f : 1e-6f)) << "entry " << i;
    ASSERT_EQ(e.directions.size(), 3u) << "entry " << i;
    for (size_t d = 0; d < 3; ++d) {
      EXPECT_EQ(e.directions[d].seed, steps[i][d].seed) << "entry " << i << " direction " << d;
      EXPECT_EQ(Bits(e.directions[d].g), Bits(steps[i][d].g))
          << "entry " << i << " direction " << d;
    }
  }
  // Without expectations the header's q is taken as it is.
  auto unchecked = ReadTrajectory(path);
  ASSERT_TRUE(unchecked.ok()) << unchecked.status();
  EXPECT_EQ((*unchecked)[0].directions.size(), 3u);
}

// A q = 1 log is today's v1 file, byte for byte (header and "%d %d %.9g
// %.9g\n" lines), whatever the values.
TEST(TrajectoryLog, OneDirectionWritesTheV1FormatByteForByte) {
  const std::string path = TempPath("v1_bytes.log");
  {
    auto writer = TrajectoryWriter::Open(path, 18446744073709551615ull, 1);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(0, One(0, 0.0f), 1e-3f).ok());
    ASSERT_TRUE((*writer)->Append(1, One(18446744073709551615ull, -0.0f), 0.1f).ok());
    ASSERT_TRUE(
        (*writer)->Append(2, One(1234567890123ull, std::numeric_limits<float>::max()), 0.0f).ok());
    ASSERT_TRUE(
        (*writer)->Append(3, One(5, -std::numeric_limits<float>::denorm_min()), 1e-6f).ok());
    ASSERT_TRUE((*writer)->Append(4, One(6, 1.0f / 3.0f), 2.5e-5f).ok());
  }
  EXPECT_EQ(ReadFile(path),
            "# zosched trajectory v1 base_seed=18446744073709551615\n"
            "0 0 0 0.00100000005\n"
            "1 18446744073709551615 -0 0.100000001\n"
            "2 1234567890123 3.40282347e+38 0\n"
            "3 5 -1.40129846e-45 9.99999997e-07\n"
            "4 6 0.333333343 2.49999994e-05\n");
}

TEST(TrajectoryLog, ReopeningWithOtherDirectionsFails) {
  struct Case {
    int file_q;
    int run_q;
    const char* error;  // expected substring, after "PATH"
  };
  const std::vector<Case> cases = {
      {1, 3, ":1: header directions=1 (a v1 header) does not match the run's directions=3"},
      {3, 1, ":1: header directions=3 does not match the run's directions=1"},
      {3, 2, ":1: header directions=3 does not match the run's directions=2"},
  };
  for (const Case& c : cases) {
    const std::string path = TempPath(absl::StrCat("other_q_", c.file_q, "_", c.run_q, ".log"));
    {
      auto first = TrajectoryWriter::Open(path, 8, c.file_q);
      ASSERT_TRUE(first.ok()) << first.status();
      ASSERT_TRUE(
          (*first)->Append(0, std::vector<DirectionGradient>(c.file_q, {1, 0.5f}), 1e-6f).ok());
    }
    const std::string before = ReadFile(path);
    auto writer = TrajectoryWriter::Open(path, 8, c.run_q);
    ASSERT_FALSE(writer.ok()) << c.file_q << " " << c.run_q;
    EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(writer.status().message().find(path + c.error), std::string::npos) << writer.status();
    EXPECT_NE(writer.status().message().find("start a new --out_dir"), std::string::npos)
        << writer.status();
    EXPECT_EQ(ReadFile(path), before) << "the refused Open must not touch the file";
    const auto read = ReadTrajectory(path, std::nullopt, c.run_q);
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(read.status().message().find(path + c.error), std::string::npos) << read.status();
    EXPECT_TRUE(ReadTrajectory(path, 8, c.file_q).ok());
  }
  const auto zero = TrajectoryWriter::Open(TempPath("zero_q.log"), 8, 0);
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("directions=0"), std::string::npos) << zero.status();
}

TEST(TrajectoryLog, AppendNeedsExactlyTheLogsDirections) {
  const std::string path = TempPath("append_q.log");
  auto writer = TrajectoryWriter::Open(path, 2, 3);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const std::vector<DirectionGradient> two = {{1, 0.5f}, {2, 0.5f}};
  const absl::Status short_step = (*writer)->Append(0, two, 1e-6f);
  EXPECT_EQ(short_step.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(short_step.message().find(path + ": step 0 has 2 directions, but the log has "
                                             "directions=3"),
            std::string::npos)
      << short_step;
  const std::vector<DirectionGradient> four = {{1, 0.5f}, {2, 0.5f}, {3, 0.5f}, {4, 0.5f}};
  EXPECT_EQ((*writer)->Append(0, four, 1e-6f).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*writer)->Append(0, {}, 1e-6f).code(), absl::StatusCode::kInvalidArgument);
  const std::vector<DirectionGradient> nan_last = {{1, 0.5f}, {2, 0.5f}, {3, std::nanf("")}};
  const absl::Status nan = (*writer)->Append(0, nan_last, 1e-6f);
  EXPECT_EQ(nan.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(nan.message().find("direction 2's g=nan must be finite"), std::string::npos) << nan;
  EXPECT_FALSE((*writer)->last_step().has_value());
  EXPECT_EQ(ReadFile(path), "# zosched trajectory v2 base_seed=2 directions=3\n");
  // A one-direction log takes exactly one.
  auto v1 = TrajectoryWriter::Open(TempPath("append_q1.log"), 2, 1);
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ((*v1)->Append(0, two, 1e-6f).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*v1)->Append(0, {}, 1e-6f).code(), absl::StatusCode::kInvalidArgument);
}

TEST(TrajectoryLog, MalformedV2FilesNameFileAndLine) {
  const std::string header = "# zosched trajectory v2 base_seed=3 directions=3\n";
  const std::string good = "0 1 0.5 2 0.25 3 -1 1e-06\n";
  const std::vector<BadFile> cases = {
      // Headers (the text is the whole file).
      {"v2_one_direction", "# zosched trajectory v2 base_seed=3 directions=1\n",
       ":1: header directions=1 is not a v2 count"},
      {"v2_zero_directions", "# zosched trajectory v2 base_seed=3 directions=0\n",
       ":1: header directions=0 is not a v2 count"},
      {"v2_negative_directions", "# zosched trajectory v2 base_seed=3 directions=-2\n",
       ":1: malformed header directions \"-2\""},
      {"v2_huge_directions", "# zosched trajectory v2 base_seed=3 directions=2147483648\n",
       ":1: malformed header directions \"2147483648\""},
      {"v2_no_directions", "# zosched trajectory v2 base_seed=3\n", ":1: malformed v2 header"},
      {"v2_trailing_space", "# zosched trajectory v2 base_seed=3 directions=3 \n",
       ":1: malformed header directions \"3 \""},
      {"v2_bad_base_seed", "# zosched trajectory v2 base_seed=x directions=3\n",
       ":1: malformed header base_seed \"x\""},
      {"v3", "# zosched trajectory v3 base_seed=3 directions=3\n", ":1: missing header"},
      // Entries under the v2 header (q = 3: 8 fields).
      {"v1_line", "0 1 0.5 1e-06\n",
       ":2: expected 8 space-separated fields \"step seed_0 g_0 ... seed_2 g_2 lr\" for "
       "directions=3, got 4"},
      {"one_short", "0 1 0.5 2 0.25 3 1e-06\n", ":2: expected 8 space-separated fields"},
      {"one_long", "0 1 0.5 2 0.25 3 -1 4 1e-06\n", ":2: expected 8 space-separated fields"},
      {"bad_seed_1", "0 1 0.5 x 0.25 3 -1 1e-06\n", ":2: seed_1 \"x\" is not a decimal uint64"},
      {"nan_g_2", "0 1 0.5 2 0.25 3 nan 1e-06\n", ":2: g_2 \"nan\" is not a finite float"},
      {"bad_lr", "0 1 0.5 2 0.25 3 -1 inf\n", ":2: lr \"inf\" is not a finite float"},
      {"short_second_line", "0 1 0.5 2 0.25 3 -1 1e-06\n1 1 0.5 2 0.25 1e-06\n",
       ":3: expected 8 space-separated fields"},
      {"gap", "0 1 0.5 2 0.25 3 -1 1e-06\n2 1 0.5 2 0.25 3 -1 1e-06\n",
       ":3: step 2 does not follow step 0"},
  };
  for (const BadFile& c : cases) {
    const std::string path = TempPath(absl::StrCat("bad_v2_", c.name, ".log"));
    const bool raw = absl::string_view(c.text).substr(0, 1) == "#";
    ExpectReadRefused(c, path, raw ? std::string(c.text) : header + c.text);
  }
  // Under a v1 header a v2 line is as wrong.
  const auto v2_line_in_v1 =
      ParseTrajectory("# zosched trajectory v1 base_seed=3\n" + good, "mem.log");
  EXPECT_NE(v2_line_in_v1.status().message().find(
                "mem.log:2: expected 4 space-separated fields \"step seed g lr\", got 8"),
            std::string::npos)
      << v2_line_in_v1.status();
  EXPECT_TRUE(ParseTrajectory(header + good, "mem.log", 3, 3).ok());
}

TEST(TrajectoryLog, ParsesFromMemoryNamingTheGivenPath) {
  const std::string text = "# zosched trajectory v1 base_seed=3\n5 9 0.5 1e-06\n6 10 -2 1e-06\n";
  auto entries = ParseTrajectory(text, "mem.log", 3);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[1].step, 6);
  ASSERT_EQ((*entries)[1].directions.size(), 1u);
  EXPECT_EQ((*entries)[1].directions[0].seed, 10u);
  EXPECT_EQ((*entries)[1].directions[0].g, -2.0f);
  const auto wrong_seed = ParseTrajectory(text, "mem.log", 4);
  EXPECT_EQ(wrong_seed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_seed.status().message().find("mem.log:1: header base_seed=3"), std::string::npos)
      << wrong_seed.status();
}

TEST(TrajectoryLog, AppendAfterTheLargestStepFails) {
  const std::string path = TempPath("int64_max.log");
  WriteFile(path, "# zosched trajectory v1 base_seed=3\n9223372036854775807 1 0.5 1e-06\n");
  auto writer = TrajectoryWriter::Open(path, 3, 1);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const absl::Status s = (*writer)->Append(0, One(1, 0.5f), 1e-6f);
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
  EXPECT_EQ(TrajectoryHeader(3, 1), "# zosched trajectory v1 base_seed=3");
  EXPECT_EQ(TrajectoryHeader(3, 4), "# zosched trajectory v2 base_seed=3 directions=4");
}

}  // namespace
}  // namespace zosched
