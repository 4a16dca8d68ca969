#include "runtime/data/nfc.h"

#include <string>

#include "gtest/gtest.h"

namespace zosched {
namespace {

TEST(NfcTest, Composes) {
  EXPECT_EQ(NormalizeNfc("cafe\u0301"), "caf\u00e9");
  EXPECT_EQ(NormalizeNfc("A\u030angstr\u00f6m"), "\u00c5ngstr\u00f6m");
  // Hangul jamo compose into a syllable.
  EXPECT_EQ(NormalizeNfc("\u1100\u1161\u11a8"), "\uac01");
  // Canonical singletons: the Angstrom and Ohm signs.
  EXPECT_EQ(NormalizeNfc("\u212b \u2126"), "\u00c5 \u03a9");
  // Two marks on one letter: the first composes, the second stays.
  EXPECT_EQ(NormalizeNfc("e\u0301\u0301"), "\u00e9\u0301");
}

TEST(NfcTest, LeavesNfcAndAsciiAlone) {
  for (const std::string& text :
       {std::string(""), std::string("plain ASCII, tabs\tand\nnewlines"),
        std::string("caf\u00e9 \u65e5\u672c\u8a9e \U0001F600"), std::string("a\0b", 3)}) {
    EXPECT_EQ(NormalizeNfc(text), text);
  }
}

// Ill-formed bytes are kept; the well-formed text around them is normalized.
TEST(NfcTest, KeepsIllFormedBytes) {
  EXPECT_EQ(NormalizeNfc("e\u0301\xff" "e\u0301\xc3"), "\u00e9\xff\u00e9\xc3");
}

}  // namespace
}  // namespace zosched
