#include "runtime/data/bpe_tokenizer.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace zosched {
namespace {

::testing::AssertionResult Contains(absl::string_view text, absl::string_view part) {
  if (text.find(part) != absl::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

std::vector<std::string> Strings(const std::vector<absl::string_view>& views) {
  return std::vector<std::string>(views.begin(), views.end());
}

TEST(ByteToUnicodeTest, MatchesGpt2) {
  EXPECT_EQ(ByteToUnicode(' '), "\u0120");   // Ġ
  EXPECT_EQ(ByteToUnicode('\n'), "\u010a");  // Ċ
  EXPECT_EQ(ByteToUnicode(0), "\u0100");
  EXPECT_EQ(ByteToUnicode(0x7f), "\u0121");
  EXPECT_EQ(ByteToUnicode(0xad), "\u0143");
  EXPECT_EQ(ByteToUnicode('a'), "a");
  EXPECT_EQ(ByteToUnicode(0xe9), "\u00e9");
  std::set<std::string> distinct;
  for (int b = 0; b < 256; ++b) distinct.insert(ByteToUnicode(static_cast<uint8_t>(b)));
  EXPECT_EQ(distinct.size(), 256u);
}

// Expected splits from Python's `regex` module with GPT-2's real pattern.
TEST(PreTokenizeTest, MatchesGpt2Pattern) {
  const struct {
    std::string text;
    std::vector<std::string> pieces;
  } cases[] = {
      {"Hello world", {"Hello", " world"}},
      {"I'm here, they're OK; we've we'll I'd 'S",
       {"I", "'m", " here", ",", " they", "'re", " OK", ";", " we", "'ve", " we", "'ll", " I",
        "'d", " '", "S"}},
      {"  two  spaces   then\n\nnewline \t tab",
       {" ", " two", " ", " spaces", "  ", " then", "\n", "\n", "newline", " \t", " tab"}},
      {"end with spaces   ", {"end", " with", " spaces", "   "}},
      {"numbers 12345 and x2y3", {"numbers", " 12345", " and", " x", "2", "y", "3"}},
      {"don't!!! stop...now", {"don", "'t", "!!!", " stop", "...", "now"}},
      {"caf\u00e9 na\u00efve \u65e5\u672c\u8a9e text",
       {"caf\u00e9", " na\u00efve", " \u65e5\u672c\u8a9e", " text"}},
      {" leading space", {" leading", " space"}},
      {"a\n b", {"a", "\n", " b"}},
      {"it's 's ''s", {"it", "'s", " '", "s", " ''", "s"}},
      {"The movie was great.\n", {"The", " movie", " was", " great", ".", "\n"}},
      {"\n\nx", {"\n", "\n", "x"}},
      {"", {}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Strings(PreTokenize(c.text)), c.pieces) << c.text;
  }
}

// Non-ASCII text splits by Unicode class as in Python's `regex` module
// (expected pieces from it): symbols and punctuation are neither letters nor
// numbers, combining marks break a word, other scripts' digits are numbers,
// and \s is White_Space (U+0085 yes, U+FEFF no).
TEST(PreTokenizeTest, ClassifiesNonAsciiCharactersAsGpt2Does) {
  const struct {
    std::string text;
    std::vector<std::string> pieces;
  } cases[] = {
      // A minus sign is a symbol, so " (−" is one piece (GPT-2's token 35508);
      // counting it as a letter split it into " (" and "−".
      {" (\u2212", {" (\u2212"}},
      {"a (\u22121)", {"a", " (\u2212", "1", ")"}},
      {"a\u2014b c", {"a", "\u2014", "b", " c"}},
      {"caf\u00e9 nai\u0308ve", {"caf\u00e9", " nai", "\u0308", "ve"}},
      {"it\u2019s", {"it", "\u2019", "s"}},
      {"\u65e5\u672c\u8a9e\u3002\u6771\u4eac", {"\u65e5\u672c\u8a9e", "\u3002", "\u6771\u4eac"}},
      {"\u0663\u0664 \u00b2 \u2167x", {"\u0663\u0664", " \u00b2", " \u2167", "x"}},
      {"\U0001F44D\U0001F3FD ok \U0001F468\u200D\U0001F469",
       {"\U0001F44D\U0001F3FD", " ok", " \U0001F468\u200D\U0001F469"}},
      // Multi-byte whitespace: a run leaves its last character, not its last
      // byte, to the word that follows.
      {"x\u00a0\u00a0y", {"x", "\u00a0", "\u00a0", "y"}},
      {"x\u3000y", {"x", "\u3000", "y"}},
      {"  \u2003x", {"  ", "\u2003", "x"}},
      // U+0085 is White_Space and U+FEFF is not, unlike JavaScript's \s
      // (which would give "a" "\u0085\u0085" "b" and "x" " " "\ufeff" "a").
      {"a\u0085\u0085b", {"a", "\u0085", "\u0085", "b"}},
      {" \u0085a", {" ", "\u0085", "a"}},
      {"x \ufeffa", {"x", " \ufeff", "a"}},
      {"\ufeff\ufeff!", {"\ufeff\ufeff!"}},
      {"I'M 'S", {"I", "'", "M", " '", "S"}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Strings(PreTokenize(c.text)), c.pieces) << c.text;
  }
}

// An ill-formed byte is one character of none of the pattern's classes.
TEST(PreTokenizeTest, IllFormedBytesAreOtherCharacters) {
  EXPECT_EQ(Strings(PreTokenize("ab\xff\xfe!c \xe2\x88" "d")),
            (std::vector<std::string>{"ab", "\xff\xfe!", "c", " \xe2\x88", "d"}));
}

// Differential test against std::regex with the pattern's ASCII form (for
// ASCII text the approximation is exact).
TEST(PreTokenizeTest, MatchesStdRegexOnRandomAsciiText) {
  const std::regex pattern(
      R"('s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+)");
  const std::string alphabet = "aBz09 \n\t'strevlmdS!.,";
  std::mt19937 rng(7);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string text;
    const int length = rng() % 24;
    for (int i = 0; i < length; ++i) text.push_back(alphabet[rng() % alphabet.size()]);
    std::vector<std::string> expected;
    for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
      expected.push_back(it->str());
    }
    ASSERT_EQ(Strings(PreTokenize(text)), expected) << "'" << text << "'";
  }
}

// A vocabulary of the 256 byte symbols (ids 0..255) plus `extra` tokens.
std::string VocabJson(const std::vector<std::string>& extra) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[ByteToUnicode(static_cast<uint8_t>(b))] = b;
  int id = 256;
  for (const std::string& t : extra) vocab[t] = id++;
  return vocab.dump(2);
}

BpeTokenizer Make(const std::vector<std::string>& extra, const std::string& merges) {
  absl::StatusOr<BpeTokenizer> tok =
      BpeTokenizer::FromStrings(VocabJson(extra), "vocab.json", merges, "merges.txt");
  EXPECT_TRUE(tok.ok()) << tok.status();
  return *std::move(tok);
}

TEST(BpeTokenizerTest, MergesByRank) {
  // "h e" outranks "Ġ t": " the" goes Ġ t h e -> Ġ t he -> Ġt he -> Ġthe.
  const BpeTokenizer tok = Make({"he", "\u0120t", "\u0120the", "aa", "</s>"},
                                "#version: 0.2\nh e\n\u0120 t\n\u0120t he\na a\n");
  const int32_t he = tok.TokenId("he"), gt = tok.TokenId("\u0120t");
  const int32_t gthe = tok.TokenId("\u0120the"), aa = tok.TokenId("aa");
  EXPECT_EQ(tok.Encode(" the"), (std::vector<int32_t>{gthe}));
  EXPECT_EQ(tok.Encode("the"), (std::vector<int32_t>{'t', he}));
  EXPECT_EQ(tok.Encode(" tax"), (std::vector<int32_t>{gt, 'a', 'x'}));
  // Every occurrence of the best pair, left to right, non-overlapping.
  EXPECT_EQ(tok.Encode("aaa"), (std::vector<int32_t>{aa, 'a'}));
  EXPECT_EQ(tok.Encode("aaaa"), (std::vector<int32_t>{aa, aa}));
  // Pre-tokens never merge across: "the the" = "the" + " the".
  EXPECT_EQ(tok.Encode("the the"), (std::vector<int32_t>{'t', he, gthe}));
  // A space is byte 0x20's symbol Ġ (id 32 here).
  EXPECT_EQ(tok.Encode("a  "), (std::vector<int32_t>{'a', ' ', ' '}));
  EXPECT_EQ(tok.TokenId("</s>"), 260);
  EXPECT_EQ(tok.TokenId("nope"), -1);
  EXPECT_EQ(tok.vocab_size(), 261);
}

// A round merges every occurrence of the best pair before any pair it
// creates, even one ranked lower (merges.txt need not rank a merge after
// those that make its parts): "abab" becomes "ab" "ab", not "aba" "b".
TEST(BpeTokenizerTest, MergesEveryOccurrenceBeforeThePairsItCreates) {
  const BpeTokenizer tok = Make({"ab", "aba"}, "ab a\na b\n");
  const int32_t ab = tok.TokenId("ab"), aba = tok.TokenId("aba");
  EXPECT_EQ(tok.Encode("abab"), (std::vector<int32_t>{ab, ab}));
  EXPECT_EQ(tok.Encode("aba"), (std::vector<int32_t>{aba}));
}

// encoder.py's bpe() over strings: merge every occurrence of the
// lowest-ranked adjacent pair, left to right, until no pair has a rank.
std::vector<std::string> ReferenceBpe(
    const std::string& word, const std::map<std::pair<std::string, std::string>, int>& ranks) {
  std::vector<std::string> symbols;
  for (char c : word) symbols.emplace_back(1, c);
  for (;;) {
    const std::pair<std::string, std::string>* best = nullptr;
    int best_rank = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = ranks.find({symbols[i], symbols[i + 1]});
      if (it != ranks.end() && (best == nullptr || it->second < best_rank)) {
        best = &it->first;
        best_rank = it->second;
      }
    }
    if (best == nullptr) return symbols;
    std::vector<std::string> merged;
    for (size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size() && symbols[i] == best->first && symbols[i + 1] == best->second) {
        merged.push_back(symbols[i] + symbols[i + 1]);
        ++i;
      } else {
        merged.push_back(symbols[i]);
      }
    }
    symbols.swap(merged);
  }
}

// Random merges over "abc", ranked in random order (so that merges often
// outrank those that make their parts), on random words: Encode gives
// what encoder.py's loop gives.
TEST(BpeTokenizerTest, MatchesEncoderPyOnRandomMerges) {
  std::mt19937 rng(11);
  for (int vocabulary = 0; vocabulary < 20; ++vocabulary) {
    std::vector<std::string> tokens = {"a", "b", "c"}, extra;
    std::vector<std::pair<std::string, std::string>> merges;
    for (int attempt = 0; attempt < 60; ++attempt) {
      const std::string left = tokens[rng() % tokens.size()];
      const std::string right = tokens[rng() % tokens.size()];
      const std::pair<std::string, std::string> pair = {left, right};
      if (left.size() + right.size() > 6 ||
          std::find(merges.begin(), merges.end(), pair) != merges.end()) {
        continue;
      }
      merges.push_back(pair);
      if (std::find(tokens.begin(), tokens.end(), left + right) == tokens.end()) {
        tokens.push_back(left + right);
        extra.push_back(left + right);
      }
    }
    std::shuffle(merges.begin(), merges.end(), rng);
    std::map<std::pair<std::string, std::string>, int> ranks;
    std::string merges_txt;
    for (const auto& [left, right] : merges) {
      ranks[{left, right}] = static_cast<int>(ranks.size());
      absl::StrAppend(&merges_txt, left, " ", right, "\n");
    }
    const BpeTokenizer tok = Make(extra, merges_txt);
    for (int w = 0; w < 200; ++w) {
      std::string word;
      for (int length = 1 + rng() % 40; length > 0; --length) word.push_back("abc"[rng() % 3]);
      std::vector<int32_t> expected;
      for (const std::string& symbol : ReferenceBpe(word, ranks)) {
        expected.push_back(tok.TokenId(symbol));
      }
      ASSERT_EQ(tok.Encode(word), expected) << word << " with merges\n" << merges_txt;
    }
  }
}

// " (\u2212" is one pre-token, so its merges apply across "(" and the minus
// sign: GPT-2 encodes it as the single token 35508 (" (\u2212"), and
// "a (\u22121)" as 64 35508 16 8.
TEST(BpeTokenizerTest, MergesAcrossPunctuationAndSymbols) {
  std::string minus;  // U+2212 in the byte alphabet: E2 88 92
  for (uint8_t b : {0xe2, 0x88, 0x92}) minus += ByteToUnicode(b);
  const std::string open = "\u0120(";  // " ("
  const std::string e2_88 = ByteToUnicode(0xe2) + ByteToUnicode(0x88);
  const BpeTokenizer tok =
      Make({open, e2_88, minus, open + minus},
           absl::StrCat("\u0120 (\n", ByteToUnicode(0xe2), " ", ByteToUnicode(0x88), "\n", e2_88,
                        " ", ByteToUnicode(0x92), "\n", open, " ", minus, "\n"));
  const int32_t open_minus = tok.TokenId(open + minus);
  EXPECT_EQ(tok.Encode(" (\u2212"), (std::vector<int32_t>{open_minus}));
  EXPECT_EQ(tok.Encode("a (\u22121)"), (std::vector<int32_t>{'a', open_minus, '1', ')'}));
  // A letter after the "(" ends the piece: " (" then "x".
  EXPECT_EQ(tok.Encode(" (x"), (std::vector<int32_t>{tok.TokenId(open), 'x'}));
}

TEST(BpeTokenizerTest, DecodeInvertsEncodeOnAnyBytes) {
  const BpeTokenizer tok = Make({"he", "\u0120t", "\u0120the", "aa"},
                                "h e\n\u0120 t\n\u0120t he\na a\n");
  for (const std::string& text :
       {std::string("the theater aaa"), std::string("caf\u00e9 \u2615 \t\r\n x"),
        std::string("\x00\xff\x80 bytes", 9), std::string("")}) {
    absl::StatusOr<std::string> decoded = tok.Decode(tok.Encode(text));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(*decoded, text);
  }
}

TEST(BpeTokenizerTest, DecodesSpecialTokensAsText) {
  const BpeTokenizer tok = Make({"</s>", "<x y>"}, "");
  absl::StatusOr<std::string> decoded = tok.Decode({256, 'a', 257});
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, "</s>a<x y>");
  EXPECT_TRUE(Contains(tok.Decode({258}).status().message(), "token id 258 is not in the vocabulary"));
  EXPECT_FALSE(tok.Decode({-1}).ok());
}

TEST(BpeTokenizerTest, ReadsFilesWithWindowsLineEndingsAndByteOrderMarks) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/vocab.json") << "\xEF\xBB\xBF" << VocabJson({"he"});
  std::ofstream(dir + "/merges.txt") << "\xEF\xBB\xBF#version: 0.2\r\nh e\r\n";
  absl::StatusOr<BpeTokenizer> tok =
      BpeTokenizer::FromFiles(dir + "/vocab.json", dir + "/merges.txt");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->Encode("he"), (std::vector<int32_t>{256}));
  EXPECT_EQ(tok->vocab_name(), dir + "/vocab.json");
  EXPECT_EQ(tok->merges_name(), dir + "/merges.txt");
  // Without the "#version" line, the mark before the first merge goes too.
  std::ofstream(dir + "/merges.txt") << "\xEF\xBB\xBFh e\r\n";
  tok = BpeTokenizer::FromFiles(dir + "/vocab.json", dir + "/merges.txt");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->Encode("he"), (std::vector<int32_t>{256}));
  EXPECT_EQ(BpeTokenizer::FromFiles(dir + "/nope.json", dir + "/merges.txt").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(BpeTokenizerTest, MalformedFilesNameFileAndLine) {
  const std::string good_vocab = VocabJson({"he"});
  const struct {
    std::string vocab;
    std::string merges;
    std::string message;
  } cases[] = {
      {good_vocab, "#version: 0.2\nh e\nh e x\n", "merges.txt:3: expected two space-separated symbols, got 'h e x'"},
      {good_vocab, "h\n", "merges.txt:1: expected two space-separated symbols, got 'h'"},
      {good_vocab, "h e\n\nq\u00ff z\n", "merges.txt:3: merge 'q\u00ff z': 'q\u00ff' is not in vocab.json"},
      {good_vocab, "t h\n", "merges.txt:1: merge 't h': 'th' is not in vocab.json"},
      {"{\"a\": 1,\n \"b\": }", "", "vocab.json: not valid JSON: [json.exception.parse_error.101] parse error at line 2, column 7"},
      {"[1, 2]", "", "vocab.json: not a JSON object of token -> id but array"},
      {"{\"a\": \"x\"}", "", "vocab.json: token 'a': id \"x\" is not an integer"},
      {"{\"a\": -1}", "", "vocab.json: token 'a': id -1 is not an integer"},
      {"{\"a\": 3, \"b\": 3}", "", "vocab.json: tokens 'a' and 'b' share id 3"},
      {"{\"a\": 3}", "", "vocab.json: the symbol '\u0100' of byte 0x00 is missing"},
      // Found by fuzz/bpe_fuzzer: a number beyond a double used to escape as
      // an uncaught exception.
      {"{\"a\": 1e999}", "", "vocab.json: not valid JSON: [json.exception.out_of_range.406]"},
      {"{\"a\": [[1]]}", "", "vocab.json: token 'a': id array is not an integer"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<BpeTokenizer> tok =
        BpeTokenizer::FromStrings(c.vocab, "vocab.json", c.merges, "merges.txt");
    ASSERT_FALSE(tok.ok()) << c.message;
    EXPECT_EQ(tok.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(tok.status().message(), c.message));
  }
}

// The message describes a nested id by its type: printing it recursed once
// per level and overflowed the stack (found by fuzz/bpe_fuzzer).
TEST(BpeTokenizerTest, DeeplyNestedIdIsAnError) {
  const int depth = 200000;
  const std::string vocab =
      absl::StrCat("{\"a\": ", std::string(depth, '['), std::string(depth, ']'), "}");
  absl::StatusOr<BpeTokenizer> tok = BpeTokenizer::FromStrings(vocab, "vocab.json", "", "m");
  EXPECT_EQ(tok.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(tok.status().message(), "token 'a': id array is not an integer"));
}

}  // namespace
}  // namespace zosched
