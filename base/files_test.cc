#include "base/files.h"

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

}  // namespace
}  // namespace zosched
