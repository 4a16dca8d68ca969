#include "runtime/data/sentencepiece_tokenizer.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// Meta's LLaMA-2 tokenizer.model in the test's runfiles.
std::string Llama2Model() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  EXPECT_TRUE(srcdir != nullptr && workspace != nullptr) << "run me with bazel test";
  return absl::StrCat(srcdir == nullptr ? "" : srcdir, "/", workspace == nullptr ? "" : workspace,
                      "/runtime/data/testdata/llama2/tokenizer.model");
}

TEST(SentencePieceTokenizerTest, Llama2) {
  if (!SentencePieceTokenizer::Available()) GTEST_SKIP() << "no SentencePiece in this build";
  absl::StatusOr<SentencePieceTokenizer> tok = SentencePieceTokenizer::FromFile(Llama2Model());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->vocab_size(), 32000);
  EXPECT_EQ(tok->bos_token(), "<s>");
  EXPECT_EQ(tok->files(), Llama2Model());
  EXPECT_EQ(tok->TokenId("<unk>"), 0);
  EXPECT_EQ(tok->TokenId("<s>"), 1);
  EXPECT_EQ(tok->TokenId("\u2581great"), 2107);
  EXPECT_EQ(tok->TokenId("<0x0A>"), 13);
  EXPECT_EQ(tok->TokenId("no such piece"), -1);
  // The dummy prefix: "Hello" is "▁Hello" at the start of a text, and
  // "Hello" after other text.
  EXPECT_EQ(tok->Encode("Hello world"), (std::vector<int32_t>{15043, 3186}));
  EXPECT_EQ(tok->EncodeContinuation("Hello"), (std::vector<int32_t>{10994}));
  EXPECT_EQ(tok->EncodeContinuation(" great"), (std::vector<int32_t>{2107}));
  // Byte fallback, and decoding back.
  const std::vector<int32_t> ids = tok->Encode("x\ty \xf0\x9f\x98\x80");
  EXPECT_EQ(ids, (std::vector<int32_t>{921, 12, 29891, 29871, 243, 162, 155, 131}));
  absl::StatusOr<std::string> text = tok->Decode(ids);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "x\ty \xf0\x9f\x98\x80");
  // Control pieces decode to nothing; an id outside the model is an error.
  EXPECT_EQ(*tok->Decode({1, 15043, 2}), "Hello");
  EXPECT_EQ(tok->Decode({32000}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tok->Decode({-1}).status().code(), absl::StatusCode::kInvalidArgument);
  // Ill-formed UTF-8 becomes U+FFFD, as in SentencePiece.
  EXPECT_EQ(*tok->Decode(tok->Encode("a\xff")), "a\xef\xbf\xbd");
}

TEST(SentencePieceTokenizerTest, Errors) {
  EXPECT_EQ(SentencePieceTokenizer::FromFile("/nonexistent/tokenizer.model").status().code(),
            absl::StatusCode::kNotFound);
  const absl::Status garbage =
      SentencePieceTokenizer::FromString("this is not a protobuf \xff\xff", "M").status();
  EXPECT_EQ(garbage.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(garbage.message().substr(0, 3), "M: ") << garbage;
  // A JSON file where the model should be.
  const absl::Status json = SentencePieceTokenizer::FromString("{\"model\": {}}", "M").status();
  EXPECT_EQ(json.code(), absl::StatusCode::kInvalidArgument) << json;

  if (!SentencePieceTokenizer::Available()) GTEST_SKIP() << "no SentencePiece in this build";
  // LLaMA-2's model with a second normalizer_spec (protobuf merges them)
  // that sets remove_extra_whitespaces (field 4).
  std::string model;
  ASSERT_TRUE(ReadFileToString(Llama2Model(), &model).ok());
  model += std::string("\x1a\x02\x20\x01", 4);
  const absl::Status strips = SentencePieceTokenizer::FromString(model, "M").status();
  EXPECT_EQ(strips.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(strips.message().find("M: the model's normalizer removes extra whitespace"),
            std::string::npos)
      << strips;
}

}  // namespace
}  // namespace zosched
