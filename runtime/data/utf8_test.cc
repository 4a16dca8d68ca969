#include "runtime/data/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace zosched {
namespace {

constexpr size_t kValid = absl::string_view::npos;

TEST(FirstInvalidUtf8, AcceptsWellFormedText) {
  EXPECT_EQ(FirstInvalidUtf8(""), kValid);
  EXPECT_EQ(FirstInvalidUtf8("a great movie"), kValid);
  EXPECT_EQ(FirstInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), kValid);  // é € 😀
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x8f\xbf\xbf"), kValid);                         // U+10FFFF
}

TEST(FirstInvalidUtf8, FindsTheFirstIllFormedSequence) {
  EXPECT_EQ(FirstInvalidUtf8("ok \x80"), 3u);                // stray continuation byte
  EXPECT_EQ(FirstInvalidUtf8("caf\xe9 latin-1"), 3u);        // Latin-1 é
  EXPECT_EQ(FirstInvalidUtf8("ab\xe2\x82"), 2u);             // truncated
  EXPECT_EQ(FirstInvalidUtf8("\xc0\xaf"), 0u);               // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8("x\xe0\x80\xaf"), 1u);          // overlong 3-byte
  EXPECT_EQ(FirstInvalidUtf8("\xed\xa0\x80"), 0u);           // surrogate U+D800
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x90\x80\x80"), 0u);       // above U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("\xe2\x28\xa1"), 0u);           // bad continuation
  EXPECT_EQ(FirstInvalidUtf8(std::string("a\xff", 2)), 1u);
}

TEST(DecodeUtf8At, DecodesEachLength) {
  const std::string text = "a\xc3\xa9\xe2\x88\x92\xf0\x9f\x98\x80";  // a é − 😀
  EXPECT_EQ(DecodeUtf8At(text, 0).code_point, 'a');
  EXPECT_EQ(DecodeUtf8At(text, 0).length, 1);
  EXPECT_EQ(DecodeUtf8At(text, 1).code_point, 0xE9u);
  EXPECT_EQ(DecodeUtf8At(text, 1).length, 2);
  EXPECT_EQ(DecodeUtf8At(text, 3).code_point, 0x2212u);
  EXPECT_EQ(DecodeUtf8At(text, 3).length, 3);
  EXPECT_EQ(DecodeUtf8At(text, 6).code_point, 0x1F600u);
  EXPECT_EQ(DecodeUtf8At(text, 6).length, 4);
}

TEST(DecodeUtf8At, IllFormedBytesDecodeOneByOne) {
  const std::string text = "\xe2\x88" "d\xc0\xaf";  // truncated −, overlong '/'
  for (size_t i : {0u, 1u, 3u, 4u}) {
    EXPECT_EQ(DecodeUtf8At(text, i).code_point, kIllFormedUtf8) << i;
    EXPECT_EQ(DecodeUtf8At(text, i).length, 1) << i;
  }
  EXPECT_EQ(DecodeUtf8At(text, 2).code_point, 'd');
}

}  // namespace
}  // namespace zosched
