#include "runtime/data/utf8.h"

namespace zosched {

Utf8Char DecodeUtf8At(absl::string_view text, size_t i) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  const unsigned char b = s[i];
  if (b < 0x80) return {b, 1};
  constexpr Utf8Char kIllFormed = {kIllFormedUtf8, 1};
  // The sequence's length, the lead byte's payload, and the range of the
  // second byte (RFC 3629 table: the ranges exclude overlong forms,
  // surrogates and > U+10FFFF).
  int length = 0;
  uint32_t code_point = 0;
  unsigned char low = 0x80, high = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    length = 2;
    code_point = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    length = 3;
    code_point = b & 0x0F;
    if (b == 0xE0) low = 0xA0;
    if (b == 0xED) high = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    length = 4;
    code_point = b & 0x07;
    if (b == 0xF0) low = 0x90;
    if (b == 0xF4) high = 0x8F;
  } else {
    return kIllFormed;
  }
  if (i + length > n || s[i + 1] < low || s[i + 1] > high) return kIllFormed;
  for (int k = 1; k < length; ++k) {
    if (s[i + k] < 0x80 || s[i + k] > 0xBF) return kIllFormed;
    code_point = code_point << 6 | (s[i + k] & 0x3F);
  }
  return {code_point, length};
}

size_t FirstInvalidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = DecodeUtf8At(text, i);
    if (c.code_point == kIllFormedUtf8) return i;
    i += c.length;
  }
  return absl::string_view::npos;
}

}  // namespace zosched
