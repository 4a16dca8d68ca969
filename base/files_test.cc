#include "base/files.h"

#include <sys/stat.h>
#include <sys/types.h>

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(Files, WriteThenReadBack) {
  const std::string path = ::testing::TempDir() + "/files_test.txt";
  ASSERT_TRUE(WriteFile(path, std::string("a\0b\n", 4)).ok());
  std::string back;
  ASSERT_TRUE(ReadFileToString(path, &back).ok());
  EXPECT_EQ(back, std::string("a\0b\n", 4));
  ASSERT_TRUE(WriteFile(path, "x").ok());  // replaces
  ASSERT_TRUE(ReadFileToString(path, &back).ok());
  EXPECT_EQ(back, "x");
}

TEST(Files, ErrorsNameThePath) {
  absl::Status s = WriteFile("/nonexistent-dir/f.txt", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent-dir/f.txt"), std::string::npos);
  std::string out;
  s = ReadFileToString("/nonexistent-dir/f.txt", &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent-dir/f.txt"), std::string::npos);
}

void ExpectRefused(const std::string& path, const std::string& message, int64_t max_bytes = 1 << 30) {
  std::string out;
  const absl::Status s = ReadFileToString(path, &out, max_bytes);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << path << ": " << s;
  EXPECT_NE(s.message().find(message), std::string::npos) << s;
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
}

TEST(Files, RefusesADirectory) {
  ExpectRefused(::testing::TempDir(), "is a directory; expected a file");
}

// /dev/zero would read forever: refused before it is opened.
TEST(Files, RefusesADevice) {
  ExpectRefused("/dev/zero", "is not a regular file (a character device)");
}

// Opening a FIFO for reading blocks until a writer comes: refused first.
TEST(Files, RefusesAFifo) {
  const std::string path = ::testing::TempDir() + "/files_test.fifo";
  unlink(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  ExpectRefused(path, "is not a regular file (a FIFO)");
}

// The check every reader of a user's path makes first, with the reader's
// words for what it expected.
TEST(Files, RegularFileBytesSaysWhatThePathIsAndWhatWasExpected) {
  const std::string path = ::testing::TempDir() + "/files_test.sized";
  ASSERT_TRUE(WriteFile(path, std::string(12, 'x')).ok());
  absl::StatusOr<int64_t> bytes = RegularFileBytes(path, "a .safetensors file");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 12);
  bytes = RegularFileBytes(::testing::TempDir(), "a .safetensors file");
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bytes.status().message(),
            ::testing::TempDir() + " is a directory; expected a .safetensors file");
  bytes = RegularFileBytes("/dev/null", "a .safetensors file");
  EXPECT_EQ(bytes.status().message(),
            "/dev/null is not a regular file (a character device); expected a .safetensors file");
  bytes = RegularFileBytes(path + ".missing", "a file");
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(bytes.status().message(),
            "cannot open " + path + ".missing: No such file or directory");
}

TEST(Files, RefusesAFileAboveTheLimit) {
  const std::string path = ::testing::TempDir() + "/files_test.big";
  ASSERT_TRUE(WriteFile(path, std::string(100, 'x')).ok());
  ExpectRefused(path, "is 100 bytes, above the limit of 99 bytes", 99);
  std::string out;
  EXPECT_TRUE(ReadFileToString(path, &out, 100).ok());
}

}  // namespace
}  // namespace zosched
