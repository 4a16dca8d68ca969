#include "runtime/data/boolq.h"

#include <fstream>

#include "gtest/gtest.h"
#include "runtime/data/text_lines.h"

namespace zosched {
namespace {

::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

TEST(BoolqTest, ReadsJsonl) {
  const std::string path = ::testing::TempDir() + "/boolq_test.jsonl";
  std::ofstream(path)
      << R"({"question": "do iran and afghanistan speak the same language", "title": "Persian language", "answer": true, "passage": "Persian (/\u02c8p\u025c\u02d0r\u0292\u0259n/) is a language."})"
      << "\r\n\n"
      << R"({"idx": 3, "question": "is the sky green", "passage": "The sky is blue.", "label": false})"
      << "\n";
  absl::StatusOr<std::vector<BoolqExample>> examples = ReadBoolqJsonl(path);
  ASSERT_TRUE(examples.ok()) << examples.status();
  ASSERT_EQ(examples->size(), 2u);
  EXPECT_EQ((*examples)[0].question, "do iran and afghanistan speak the same language");
  EXPECT_EQ((*examples)[0].passage,
            "Persian (/\u02c8p\u025c\u02d0r\u0292\u0259n/) is a language.");
  EXPECT_TRUE((*examples)[0].answer);
  EXPECT_EQ((*examples)[1].question, "is the sky green");
  EXPECT_FALSE((*examples)[1].answer);
}

TEST(BoolqTest, ReadsAFileWithAByteOrderMarkAndWindowsLineEndings) {
  const std::string path = ::testing::TempDir() + "/boolq_bom.jsonl";
  std::ofstream(path) << "\xEF\xBB\xBF{\"question\": \"q1\", \"passage\": \"p1\", \"answer\": true}\r\n"
                      << "{\"question\": \"q2\", \"passage\": \"p2\", \"answer\": false}\r\n";
  absl::StatusOr<std::vector<BoolqExample>> examples = ReadBoolqJsonl(path);
  ASSERT_TRUE(examples.ok()) << examples.status();
  ASSERT_EQ(examples->size(), 2u);
  EXPECT_EQ((*examples)[0].question, "q1");
  EXPECT_EQ((*examples)[1].passage, "p2");
}

TEST(BoolqTest, RefusesAFileWithoutExamples) {
  const std::string path = ::testing::TempDir() + "/val.jsonl";
  std::ofstream(path) << "\n\r\n";
  const absl::Status status = ReadBoolqJsonl(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            path + ": no examples: a train or dev set needs at least one line holding a JSON "
                   "object {\"question\": \"...\", \"passage\": \"...\", \"answer\": true or false}");
}

TEST(BoolqTest, RefusesARecordAboveTheLimitNamingFileAndLine) {
  const std::string path = ::testing::TempDir() + "/train.jsonl";
  std::ofstream(path) << "{\"question\": \"q\", \"passage\": \"" << std::string(kMaxDataLineBytes, 'x')
                      << "\", \"answer\": true}\n";
  const absl::Status status = ReadBoolqJsonl(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(status.message(), path + ":1: line is longer than 1048576 bytes (1 MiB)"));
}

TEST(BoolqTest, ErrorsNameFileAndLine) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"{\"question\": \"q\", \"passage\": \"p\", \"answer\": true}\n{\"question\": \"q\",",
       "x.jsonl:2: not valid JSON: [json.exception.parse_error"},
      {"[]", "x.jsonl:1: not a JSON object"},
      {"\n{\"passage\": \"p\", \"answer\": true}", "x.jsonl:2: no string \"question\""},
      {"{\"question\": \"q\", \"passage\": 3, \"answer\": true}", "x.jsonl:1: no string \"passage\""},
      {"{\"question\": \"q\", \"passage\": \"p\", \"answer\": \"yes\"}",
       "x.jsonl:1: no boolean \"answer\" (or \"label\")"},
      {"{\"question\": \"q\", \"passage\": \"p\"}", "x.jsonl:1: no boolean \"answer\""},
      // A number beyond double's range: nlohmann throws out_of_range, not parse_error.
      {"{\"question\": \"q\", \"passage\": \"p\", \"answer\": 1e999}",
       "x.jsonl:1: not valid JSON: [json.exception.out_of_range"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::vector<BoolqExample>> examples = ParseBoolqJsonl(c.text, "x.jsonl");
    ASSERT_FALSE(examples.ok()) << c.message;
    EXPECT_EQ(examples.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(examples.status().message(), c.message));
  }
  EXPECT_EQ(ReadBoolqJsonl(::testing::TempDir() + "/missing.jsonl").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace zosched
