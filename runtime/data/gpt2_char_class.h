// The character classes of GPT-2's pre-tokenization pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// as OpenAI's encoder.py matches it (Python's `regex` module): letters \p{L},
// numbers \p{N}, whitespace \s (the Unicode White_Space property), and the
// rest. The table (gpt2_char_class_table.inc) is Unicode 17.0's, generated
// by tools/gpt2_reference/make_unicode_table.js.
#pragma once

#include <cstdint>

namespace zosched {

enum class CharClass : uint8_t {
  kLetter,  // General_Category L (Lu, Ll, Lt, Lm, Lo): "a", "é", "日", "ß"
  kNumber,  // General_Category N (Nd, Nl, No): "7", "٣", "²", "Ⅻ", "½"
  kSpace,   // White_Space: \t \n \v \f \r, ' ', U+0085, U+00A0, U+1680,
            // U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000
  kOther,   // everything else: punctuation, symbols ("−", "€", "😀"),
            // combining marks, controls, format characters (U+FEFF, ZWJ)
};

// The class of code point `code_point`. Code points beyond U+10FFFF,
// surrogates and unassigned code points are kOther.
CharClass Gpt2CharClass(uint32_t code_point);

}  // namespace zosched
