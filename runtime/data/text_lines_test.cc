#include "runtime/data/text_lines.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

using Lines = std::vector<std::pair<int, std::string>>;

::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

absl::Status Collect(absl::string_view text, Lines* lines) {
  return ForEachLine(text, "x.tsv", [lines](int number, absl::string_view line) {
    lines->emplace_back(number, std::string(line));
    return absl::OkStatus();
  });
}

absl::Status CollectFile(const std::string& path, Lines* lines) {
  return ForEachFileLine(path, [lines](int number, absl::string_view line) {
    lines->emplace_back(number, std::string(line));
    return absl::OkStatus();
  });
}

std::string WriteTemp(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(ForEachLineTest, SplitsAtNewlinesAndDropsCarriageReturns) {
  Lines lines;
  ASSERT_TRUE(Collect("a\nb\r\n\nc d\r", &lines).ok());
  EXPECT_EQ(lines, (Lines{{1, "a"}, {2, "b"}, {3, ""}, {4, "c d"}}));
  lines.clear();
  ASSERT_TRUE(Collect("one\r\ntwo\r\n", &lines).ok());
  EXPECT_EQ(lines, (Lines{{1, "one"}, {2, "two"}}));
  lines.clear();
  ASSERT_TRUE(Collect("", &lines).ok());
  EXPECT_TRUE(lines.empty());
  // A "\r" inside a line is text.
  lines.clear();
  ASSERT_TRUE(Collect("a\rb\n", &lines).ok());
  EXPECT_EQ(lines, (Lines{{1, "a\rb"}}));
}

TEST(ForEachLineTest, DropsAByteOrderMarkAtTheStartOnly) {
  Lines lines;
  ASSERT_TRUE(Collect("\xEF\xBB\xBFsentence\tlabel\r\n\xEF\xBB\xBFx\t1\r\n", &lines).ok());
  EXPECT_EQ(lines, (Lines{{1, "sentence\tlabel"}, {2, "\xEF\xBB\xBFx\t1"}}));
}

TEST(ForEachLineTest, StopsAtTheVisitorsError) {
  int visited = 0;
  const absl::Status status =
      ForEachLine("a\nb\nc\n", "x.tsv", [&visited](int number, absl::string_view) {
        ++visited;
        return number == 2 ? absl::InvalidArgumentError("x.tsv:2: bad") : absl::OkStatus();
      });
  EXPECT_EQ(status, absl::InvalidArgumentError("x.tsv:2: bad"));
  EXPECT_EQ(visited, 2);
}

TEST(ForEachLineTest, RefusesALineAboveTheLimitNamingFileLineAndLimit) {
  const std::string longest(kMaxDataLineBytes, 'a');
  Lines lines;
  // The limit counts neither the line ending nor the byte order mark.
  ASSERT_TRUE(Collect(absl::StrCat("\xEF\xBB\xBF", longest, "\r\n", longest), &lines).ok());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].second.size(), longest.size());

  for (const std::string& text : {absl::StrCat("ok\n", longest, "b\r\n"),  // ends in a newline
                                  absl::StrCat("ok\n", longest, "b"),      // ends the text
                                  absl::StrCat("ok\n", longest, longest, "\nlater\n")}) {
    lines.clear();
    const absl::Status status = Collect(text, &lines);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(status.message(),
                         "x.tsv:2: line is longer than 1048576 bytes (1 MiB), the limit for a "
                         "line of a data file"));
    EXPECT_EQ(lines, (Lines{{1, "ok"}}));
  }
}

TEST(ForEachFileLineTest, ReadsAFileAsForEachLineReadsItsText) {
  // Lines of many lengths, so that lines straddle the 64 KiB blocks.
  std::string text = "\xEF\xBB\xBFheader\r\n";
  for (int i = 0; i < 3000; ++i) {
    text += std::string(i * 7 % 500, static_cast<char>('a' + i % 26)) + (i % 3 ? "\n" : "\r\n");
  }
  text += "last line without a newline";
  Lines from_text, from_file;
  ASSERT_TRUE(Collect(text, &from_text).ok());
  ASSERT_TRUE(CollectFile(WriteTemp("lines.txt", text), &from_file).ok());
  EXPECT_EQ(from_file, from_text);
  EXPECT_EQ(from_file.size(), 3002u);
  EXPECT_EQ(from_file.front().second, "header");
}

// A file of one 3 GiB line (sparse: no disk space) is refused at line 1 with
// the line limit, after reading about 1 MiB of it: read whole, it would be
// refused for its size (above ReadFileToString's 1 GiB) or fill the memory.
TEST(ForEachFileLineTest, RefusesAHugeLineBeforeReadingItWhole) {
  const std::string path = ::testing::TempDir() + "/huge.tsv";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, int64_t{3} << 30), 0);
  close(fd);
  int visited = 0;
  const absl::Status status = ForEachFileLine(path, [&visited](int, absl::string_view) {
    ++visited;
    return absl::OkStatus();
  });
  unlink(path.c_str());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status.message(), path + ":1: line is longer than 1048576 bytes (1 MiB)"));
  EXPECT_EQ(visited, 0);
}

TEST(ForEachFileLineTest, RefusesWhatIsNotARegularFile) {
  Lines lines;
  const std::string dir = ::testing::TempDir();
  absl::Status status = CollectFile(dir + "/missing.tsv", &lines);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(status.message(), "cannot open " + dir + "/missing.tsv: No such file"));

  status = CollectFile(dir, &lines);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status.message(), " is a directory; expected a file"));

  // A FIFO with no writer: opening or reading it must not block.
  const std::string fifo = dir + "/fifo.tsv";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  status = CollectFile(fifo, &lines);
  unlink(fifo.c_str());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status.message(), "fifo.tsv is not a regular file (a FIFO); expected a file"));
}

}  // namespace
}  // namespace zosched
