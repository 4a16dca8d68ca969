#include "base/text_catalog.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "google/protobuf/duration.pb.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

using google::protobuf::Duration;

const std::vector<EmbeddedTextFile>& Files() {
  static const auto* files = new std::vector<EmbeddedTextFile>{
      {"catalog/five.pbtxt", "seconds: 5"},
      {"catalog/eight.pbtxt", "seconds: 8"},
  };
  return *files;
}

const TextCatalog& Catalog() {
  static const auto* catalog = new TextCatalog(Files(), "duration");
  return *catalog;
}

// A fresh path under the test's temporary directory (removed if present).
std::string TempPath(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/text_catalog_test_" + name;
  unlink(path.c_str());
  rmdir(path.c_str());
  return path;
}

bool Contains(const absl::Status& status, const std::string& text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

TEST(TextCatalog, NamesAreSortedStems) {
  EXPECT_EQ(Catalog().Names(), (std::vector<std::string>{"eight", "five"}));
  EXPECT_EQ(Catalog().PathOf("five"), "catalog/five.pbtxt");
  EXPECT_EQ(Catalog().PathOf("six"), "");
}

TEST(TextCatalog, LoadsAnEntryByName) {
  Duration d;
  std::string source;
  ASSERT_TRUE(Catalog().Load("eight", &d, &source).ok());
  EXPECT_EQ(d.seconds(), 8);
  EXPECT_EQ(source, "catalog/eight.pbtxt");
}

TEST(TextCatalog, LoadsAUserFile) {
  const std::string path = TempPath("mine.pbtxt");
  std::ofstream(path) << "seconds: 3\n";
  Duration d;
  std::string source;
  ASSERT_TRUE(Catalog().Load(path, &d, &source).ok());
  EXPECT_EQ(d.seconds(), 3);
  EXPECT_EQ(source, path);
}

TEST(TextCatalog, UnknownNameListsTheKnownOnes) {
  Duration d;
  std::string source;
  const absl::Status status = Catalog().Load("six", &d, &source);
  ASSERT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(),
            "unknown duration 'six'; known durations: eight, five; or pass the path "
            "of a Duration textproto");
}

TEST(TextCatalog, MissingPathSaysThereIsNoFile) {
  const std::string path = TempPath("absent.pbtxt");
  Duration d;
  std::string source;
  const absl::Status status = Catalog().Load(path, &d, &source);
  ASSERT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(status, "unknown duration '" + path + "' (no file at " + path))
      << status;
  EXPECT_TRUE(Contains(status, "No such file or directory")) << status;
  EXPECT_TRUE(Contains(status, "known durations: eight, five")) << status;
}

TEST(TextCatalog, DirectoryIsRefusedAsADirectory) {
  const std::string path = TempPath("dir");
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  Duration d;
  std::string source;
  const absl::Status status = Catalog().Load(path, &d, &source);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status, path + " is a directory; expected a file")) << status;
  EXPECT_FALSE(Contains(status, "unknown duration")) << status;
}

// A FIFO would block a reader forever: it must be refused before opening.
TEST(TextCatalog, FifoIsRefusedWithoutBlocking) {
  const std::string path = TempPath("fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  Duration d;
  std::string source;
  const absl::Status status = Catalog().Load(path, &d, &source);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status, path + " is not a regular file (a FIFO)")) << status;
  EXPECT_FALSE(Contains(status, "unknown duration")) << status;
  unlink(path.c_str());
}

TEST(TextCatalog, DeviceIsRefused) {
  Duration d;
  std::string source;
  const absl::Status status = Catalog().Load("/dev/zero", &d, &source);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status, "/dev/zero is not a regular file (a character device)"))
      << status;
}

TEST(TextCatalog, EmptyFileIsRefusedAsEmpty) {
  const std::string path = TempPath("empty.pbtxt");
  std::ofstream(path).close();
  Duration d;
  std::string source;
  const absl::Status status = Catalog().Load(path, &d, &source);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status, path + " is empty; expected a google.protobuf.Duration textproto"))
      << status;
}

TEST(TextCatalog, MalformedFileNamesLineAndColumn) {
  const std::string path = TempPath("bad.pbtxt");
  std::ofstream(path) << "seconds: 1\nnanos: x\n";
  Duration d;
  std::string source;
  const absl::Status status = Catalog().Load(path, &d, &source);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status, path + ":2:")) << status;
}

}  // namespace
}  // namespace zosched
