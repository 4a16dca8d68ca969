#include "runtime/data/gpt2_char_class.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace zosched {
namespace {

// Expected classes checked against Python's `regex` module (\p{L}, \p{N},
// \s), which OpenAI's GPT-2 encoder uses.
TEST(Gpt2CharClassTest, MatchesPythonRegexClasses) {
  const struct {
    uint32_t code_point;
    CharClass expected;
  } cases[] = {
      {'a', CharClass::kLetter},     {'Z', CharClass::kLetter},
      {0x00E9, CharClass::kLetter},  // é
      {0x00AA, CharClass::kLetter},  // ª (Lo)
      {0x01C5, CharClass::kLetter},  // ǅ (Lt)
      {0x02B0, CharClass::kLetter},  // ʰ (Lm)
      {0x05D0, CharClass::kLetter},  // א
      {0x65E5, CharClass::kLetter},  // 日
      {0x20000, CharClass::kLetter},  // CJK Extension B
      {'0', CharClass::kNumber},     {'9', CharClass::kNumber},
      {0x0663, CharClass::kNumber},  // Arabic-Indic three
      {0x00B2, CharClass::kNumber},  // ² (No)
      {0x00BD, CharClass::kNumber},  // ½
      {0x216B, CharClass::kNumber},  // Ⅻ (Nl)
      {0x1D7CE, CharClass::kNumber},  // mathematical bold zero
      {' ', CharClass::kSpace},      {'\t', CharClass::kSpace},
      {'\n', CharClass::kSpace},     {'\v', CharClass::kSpace},
      {'\f', CharClass::kSpace},     {'\r', CharClass::kSpace},
      {0x0085, CharClass::kSpace},   // NEL: White_Space (JavaScript's \s says no)
      {0x00A0, CharClass::kSpace},   // no-break space
      {0x1680, CharClass::kSpace},   {0x2000, CharClass::kSpace},
      {0x200A, CharClass::kSpace},   {0x2028, CharClass::kSpace},
      {0x2029, CharClass::kSpace},   {0x202F, CharClass::kSpace},
      {0x205F, CharClass::kSpace},   {0x3000, CharClass::kSpace},
      {'(', CharClass::kOther},      {'\'', CharClass::kOther},
      {'_', CharClass::kOther},      {0x00, CharClass::kOther},
      {0x1C, CharClass::kOther},     // Python's str.isspace() says yes; \s says no
      {0x2212, CharClass::kOther},   // − minus sign (Sm)
      {0x20AC, CharClass::kOther},   // € (Sc)
      {0x02DC, CharClass::kOther},   // ˜ (Sk)
      {0x2014, CharClass::kOther},   // — (Pd)
      {0x2026, CharClass::kOther},   // …
      {0x0301, CharClass::kOther},   // combining acute accent (Mn)
      {0x200B, CharClass::kOther},   // zero width space (Cf, not White_Space)
      {0x200D, CharClass::kOther},   // zero width joiner
      {0xFEFF, CharClass::kOther},   // BOM / ZWNBSP (JavaScript's \s says space)
      {0x1F600, CharClass::kOther},  // 😀
      {0x1F3FB, CharClass::kOther},  // skin tone modifier (Sk)
      {0xD800, CharClass::kOther},   // surrogate
      {0x0378, CharClass::kOther},   // unassigned
      {0x10FFFF, CharClass::kOther}, {0x110000, CharClass::kOther},
      {0xFFFFFFFF, CharClass::kOther},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Gpt2CharClass(c.code_point), c.expected) << "U+" << std::hex << c.code_point;
  }
}

}  // namespace
}  // namespace zosched
