#include "base/textproto.h"

#include <fstream>

#include "google/protobuf/duration.pb.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

using google::protobuf::Duration;

TEST(ParseTextProto, ParsesValidText) {
  Duration d;
  d.set_nanos(9);  // parsing replaces, not merges
  ASSERT_TRUE(ParseTextProto("seconds: 5", "inline", &d).ok());
  EXPECT_EQ(d.seconds(), 5);
  EXPECT_EQ(d.nanos(), 0);
}

TEST(ParseTextProto, ReportsSourceLineAndColumnOneBased) {
  Duration d;
  absl::Status s = ParseTextProto("seconds: 5\n  nanos: abc\n", "x.pbtxt", &d);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().substr(0, 12), "x.pbtxt:2:10") << s;
  EXPECT_NE(s.message().find("integer"), std::string::npos) << s;
}

TEST(ParseTextProto, ReportsUnknownField) {
  Duration d;
  absl::Status s = ParseTextProto("secs: 5", "y.pbtxt", &d);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("y.pbtxt:1:"), std::string::npos) << s;
  EXPECT_NE(s.message().find("secs"), std::string::npos) << s;
}

TEST(ReadTextProtoFile, ReadsARealFile) {
  std::string path = ::testing::TempDir() + "/duration.pbtxt";
  std::ofstream(path) << "# a comment\nseconds: 7\n";
  Duration d;
  ASSERT_TRUE(ReadTextProtoFile(path, &d).ok());
  EXPECT_EQ(d.seconds(), 7);
}

TEST(ReadTextProtoFile, MissingFileIsNotFoundAndNamed) {
  Duration d;
  absl::Status s = ReadTextProtoFile("/nonexistent/zosched.pbtxt", &d);
  ASSERT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent/zosched.pbtxt"), std::string::npos);
}

}  // namespace
}  // namespace zosched
