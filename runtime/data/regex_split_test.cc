#include "runtime/data/regex_split.h"

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace zosched {
namespace {

// Llama-3's pre-tokenizer pattern, as its tokenizer.json writes it.
constexpr absl::string_view kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::vector<std::string> Pieces(const RegexSplitter& splitter, absl::string_view text) {
  std::vector<absl::string_view> pieces;
  splitter.Split(text, &pieces);
  return std::vector<std::string>(pieces.begin(), pieces.end());
}

TEST(RegexSplitTest, Llama3Pattern) {
  absl::StatusOr<RegexSplitter> llama3 = RegexSplitter::Compile(kLlama3);
  ASSERT_TRUE(llama3.ok()) << llama3.status();
  // Case-insensitive contractions, digits in threes, a letter run taking
  // one character before it, whitespace runs leaving their last space.
  EXPECT_EQ(Pieces(*llama3, "I'M here's 1234567!!\n\n  x  "),
            (std::vector<std::string>{"I", "'M", " here", "'s", " ", "123", "456", "7", "!!\n\n",
                                      " ", " x", "  "}));
  // \p{L} and \p{N} are Unicode's: accents, CJK, Arabic-Indic digits.
  EXPECT_EQ(Pieces(*llama3, "caf\u00e9 \u65e5\u672c \u0661\u0662\u0663\u0664"),
            (std::vector<std::string>{"caf\u00e9", " \u65e5\u672c", " ",
                                      "\u0661\u0662\u0663", "\u0664"}));
  EXPECT_TRUE(Pieces(*llama3, "").empty());
}

// A stretch between matches is a piece too; the pieces join back to the
// text.
TEST(RegexSplitTest, IsolatedKeepsTheGaps) {
  absl::StatusOr<RegexSplitter> digits = RegexSplitter::Compile(R"(\d+)");
  ASSERT_TRUE(digits.ok());
  EXPECT_EQ(Pieces(*digits, "ab12cd345"), (std::vector<std::string>{"ab", "12", "cd", "345"}));
  EXPECT_EQ(Pieces(*digits, "abc"), (std::vector<std::string>{"abc"}));
  // Empty matches are no pieces.
  absl::StatusOr<RegexSplitter> maybe = RegexSplitter::Compile(R"(x*)");
  ASSERT_TRUE(maybe.ok());
  EXPECT_EQ(Pieces(*maybe, "axxb\u00e9x"), (std::vector<std::string>{"a", "xx", "b\u00e9", "x"}));
}

TEST(RegexSplitTest, Literal) {
  absl::StatusOr<RegexSplitter> literal = RegexSplitter::Compile("a.b", /*literal=*/true);
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(Pieces(*literal, "a.bxaxb"), (std::vector<std::string>{"a.b", "xaxb"}));
}

// An ill-formed byte matches nothing: it stays in a gap, and nothing is
// lost.
TEST(RegexSplitTest, IllFormedUtf8) {
  absl::StatusOr<RegexSplitter> llama3 = RegexSplitter::Compile(kLlama3);
  ASSERT_TRUE(llama3.ok());
  const std::string text = "ab\xff" "cd \xc3 e\xe2\x82";
  std::string joined;
  for (const std::string& piece : Pieces(*llama3, text)) joined += piece;
  EXPECT_EQ(joined, text);
  EXPECT_EQ(Pieces(*llama3, "ab\xff" "cd"), (std::vector<std::string>{"ab", "\xff", "cd"}));
}

// U+0085 (NEL) is whitespace to PCRE2, as to the tokenizers library.
TEST(RegexSplitTest, NextLineIsWhitespace) {
  absl::StatusOr<RegexSplitter> space = RegexSplitter::Compile(R"(\s+)");
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(Pieces(*space, "a\u0085b"), (std::vector<std::string>{"a", "\u0085", "b"}));
}

// Long runs that \s+(?!\S) backtracks over, and long words: 1 MiB each.
TEST(RegexSplitTest, LongRuns) {
  absl::StatusOr<RegexSplitter> llama3 = RegexSplitter::Compile(kLlama3);
  ASSERT_TRUE(llama3.ok());
  const std::string spaces(1 << 20, ' ');
  EXPECT_EQ(Pieces(*llama3, spaces + "x"),
            (std::vector<std::string>{std::string((1 << 20) - 1, ' '), " x"}));
  const std::string letters(1 << 20, 'a');
  EXPECT_EQ(Pieces(*llama3, letters).size(), 1u);
  std::string mixed;
  for (int i = 0; i < (1 << 18); ++i) mixed += " \n\t";
  size_t total = 0;
  for (const std::string& piece : Pieces(*llama3, mixed)) total += piece.size();
  EXPECT_EQ(total, mixed.size());
}

TEST(RegexSplitTest, RefusesABadPattern) {
  absl::StatusOr<RegexSplitter> bad = RegexSplitter::Compile("(a|b");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("regular expression '(a|b': missing closing parenthesis"),
            absl::string_view::npos)
      << bad.status();
}

}  // namespace
}  // namespace zosched
