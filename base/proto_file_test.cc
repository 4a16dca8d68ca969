#include "base/proto_file.h"

#include <fstream>

#include "google/protobuf/duration.pb.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

using google::protobuf::Duration;

TEST(ProtoFile, RoundTripsTextAndBinaryByExtension) {
  Duration d;
  d.set_seconds(42);
  d.set_nanos(7);
  for (const char* name : {"/d.pbtxt", "/d.pb"}) {
    const std::string path = ::testing::TempDir() + name;
    ASSERT_TRUE(WriteProtoFile(path, d).ok());
    Duration back;
    ASSERT_TRUE(ReadProtoFile(path, &back).ok()) << path;
    EXPECT_EQ(back.seconds(), 42);
    EXPECT_EQ(back.nanos(), 7);
  }
  std::ifstream text(::testing::TempDir() + "/d.pbtxt");
  std::string first_line;
  std::getline(text, first_line);
  EXPECT_EQ(first_line, "# proto-message: google.protobuf.Duration");
}

TEST(ProtoFile, GarbageBinaryIsAnErrorNamingTheFile) {
  const std::string path = ::testing::TempDir() + "/garbage.pb";
  std::ofstream(path) << "\xff\xff\xff\xff not a proto";
  Duration d;
  absl::Status s = ReadProtoFile(path, &d);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(path), std::string::npos);
}

// An empty file, a directory and a device are refused with their path, text
// or binary; none is read as an empty message (or forever).
TEST(ProtoFile, RefusesEmptyFilesDirectoriesAndDevices) {
  for (const char* name : {"/empty.pb", "/empty.pbtxt"}) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path).close();
    Duration d;
    const absl::Status s = ReadProtoFile(path, &d);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(path + " is empty; expected a"), std::string::npos) << s;
  }
  for (const std::string& path : {::testing::TempDir(), std::string("/dev/zero")}) {
    Duration d;
    const absl::Status s = ReadProtoFile(path, &d);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(path), std::string::npos) << s;
  }
}

TEST(ProtoFile, UnwritablePathIsAnError) {
  Duration d;
  EXPECT_FALSE(WriteProtoFile("/nonexistent-dir/x.pb", d).ok());
}

}  // namespace
}  // namespace zosched
