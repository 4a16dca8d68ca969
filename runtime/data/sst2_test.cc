#include "runtime/data/sst2.h"

#include <fstream>

#include "gtest/gtest.h"
#include "runtime/data/text_lines.h"

namespace zosched {
namespace {

::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

TEST(Sst2Test, ReadsGlueTsv) {
  const std::string path = ::testing::TempDir() + "/sst2_test.tsv";
  std::ofstream(path) << "sentence\tlabel\r\n"
                         "hide new secretions from the parental units \t0\r\n"
                         "\n"
                         "that loves its characters and communicates something rather beautiful about human nature \t1\n";
  absl::StatusOr<std::vector<Sst2Example>> examples = ReadSst2Tsv(path);
  ASSERT_TRUE(examples.ok()) << examples.status();
  ASSERT_EQ(examples->size(), 2u);
  EXPECT_EQ((*examples)[0].sentence, "hide new secretions from the parental units ");
  EXPECT_EQ((*examples)[0].label, 0);
  EXPECT_EQ((*examples)[1].label, 1);
}

// Excel and Notepad write a byte order mark and "\r\n" line endings.
TEST(Sst2Test, ReadsAFileWithAByteOrderMarkAndWindowsLineEndings) {
  const std::string path = ::testing::TempDir() + "/sst2_bom.tsv";
  std::ofstream(path) << "\xEF\xBB\xBFsentence\tlabel\r\na fine film\t1\r\ndull\t0\r\n";
  absl::StatusOr<std::vector<Sst2Example>> examples = ReadSst2Tsv(path);
  ASSERT_TRUE(examples.ok()) << examples.status();
  ASSERT_EQ(examples->size(), 2u);
  EXPECT_EQ((*examples)[0].sentence, "a fine film");
  EXPECT_EQ((*examples)[1].sentence, "dull");
  EXPECT_EQ((*examples)[1].label, 0);
}

// A dev set of only its header used to give "dev accuracy 0.0000 (0
// examples)" and exit 0.
TEST(Sst2Test, RefusesAFileWithoutExamples) {
  const std::string path = ::testing::TempDir() + "/dev.tsv";
  std::ofstream(path) << "sentence\tlabel\n\n";
  const absl::Status status = ReadSst2Tsv(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            path + ": no examples after the header: a train or dev set needs at least one row "
                   "'SENTENCE<TAB>LABEL' (LABEL 0 or 1)");
}

TEST(Sst2Test, RefusesALineAboveTheLimitNamingFileAndLine) {
  const std::string path = ::testing::TempDir() + "/train.tsv";
  std::ofstream(path) << "sentence\tlabel\ngood\t1\n" << std::string(kMaxDataLineBytes, 'x') << "\t1\n";
  const absl::Status status = ReadSst2Tsv(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status.message(), path + ":3: line is longer than 1048576 bytes (1 MiB)"));
}

TEST(Sst2Test, ErrorsNameFileAndLine) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "x.tsv: empty, expected the header"},
      {"index\tsentence\n0\tfoo\n", "x.tsv:1: header 'index\tsentence' is not"},
      {"sentence\tlabel\ngood\t1\nno tab here\n", "x.tsv:3: expected 'SENTENCE<TAB>LABEL', found no tab"},
      {"sentence\tlabel\n\ngood\t2\n", "x.tsv:3: label '2' is not 0 or 1"},
      {"sentence\tlabel\ngood\t\n", "x.tsv:2: label '' is not 0 or 1"},
      // Latin-1 "café": as BoolQ's JSON reader, SST-2's refuses non-UTF-8.
      {"sentence\tlabel\ngood\t1\ncaf\xe9\t1\n", "x.tsv:3: invalid UTF-8 at byte 4 of the line"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::vector<Sst2Example>> examples = ParseSst2Tsv(c.text, "x.tsv");
    ASSERT_FALSE(examples.ok()) << c.message;
    EXPECT_EQ(examples.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(examples.status().message(), c.message));
  }
  EXPECT_EQ(ReadSst2Tsv(::testing::TempDir() + "/missing.tsv").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace zosched
