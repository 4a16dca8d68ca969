#include "runtime/data/byte_level_bpe.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace zosched {
namespace {

// The 256 byte symbols (ids 0..255), then `extra` tokens from 256 on.
nlohmann::json Vocab(const std::vector<std::string>& extra) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[ByteToUnicode(static_cast<uint8_t>(b))] = b;
  int id = 256;
  for (const std::string& token : extra) vocab[token] = id++;
  return vocab;
}

TEST(ByteLevelBpeTest, MergesByRank) {
  absl::StatusOr<ByteLevelBpe> bpe = ByteLevelBpe::FromVocabJson(
      Vocab({"ab", "bc", "abc", "\u0120a"}), "vocab");
  ASSERT_TRUE(bpe.ok()) << bpe.status();
  // "b c" ranks before "a b", so "abc" is a + bc, and "a bc" has no merge.
  ASSERT_TRUE(bpe->AddMerge("b", "c").ok());
  ASSERT_TRUE(bpe->AddMerge("a", "b").ok());
  ASSERT_TRUE(bpe->AddMerge("\u0120", "a").ok());
  std::vector<int32_t> ids;
  bpe->EncodeWord("abc", &ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{'a', 257}));
  ids.clear();
  bpe->EncodeWord(" a", &ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{259}));
  ids.clear();
  bpe->EncodeWord(" ab", &ids);  // "a b" ranks before "Ġ a"
  EXPECT_EQ(ids, (std::vector<int32_t>{' ', 256}));
  EXPECT_EQ(ByteLevelSymbols(" a\n"), "\u0120a\u010a");
  EXPECT_EQ(bpe->TokenId("\u0120a"), 259);
  EXPECT_EQ(bpe->TokenId("zz"), -1);
  std::string text;
  bpe->AppendText(259, &text);
  bpe->AppendText(10, &text);
  EXPECT_EQ(text, " a\n");
}

TEST(ByteLevelBpeTest, Errors) {
  EXPECT_EQ(ByteLevelBpe::FromVocabJson(nlohmann::json::array(), "V").status().message(),
            "V: not a JSON object of token -> id but array");
  nlohmann::json shared = Vocab({"x"});
  shared["y"] = 256;
  EXPECT_EQ(ByteLevelBpe::FromVocabJson(shared, "V").status().message(),
            "V: tokens 'x' and 'y' share id 256");
  nlohmann::json missing = Vocab({});
  missing.erase("\u0120");
  EXPECT_EQ(ByteLevelBpe::FromVocabJson(missing, "V").status().message(),
            "V: the symbol '\u0120' of byte 0x20 is missing (a byte-level vocabulary has all 256)");
  absl::StatusOr<ByteLevelBpe> bpe = ByteLevelBpe::FromVocabJson(Vocab({"ab"}), "V");
  ASSERT_TRUE(bpe.ok());
  EXPECT_EQ(bpe->AddMerge("b", "a").message(), "'ba' is not in V");
  EXPECT_EQ(bpe->AddMerge("ab", "a").message(), "'aba' is not in V");
  EXPECT_EQ(bpe->AddMerge("q\u00ff", "a").message(), "'q\u00ff' is not in V");
}

}  // namespace
}  // namespace zosched
