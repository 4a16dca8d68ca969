// UTF-8 decoding and well-formedness (RFC 3629): what the text readers check
// before they tokenize, so that a file in another encoding is an error naming
// the place instead of silently different tokens, and what the tokenizer's
// pre-tokenization walks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace zosched {

// One decoded character: its code point and its length in bytes (1 to 4).
// An ill-formed byte decodes as {kIllFormedUtf8, 1}.
struct Utf8Char {
  uint32_t code_point = 0;
  int length = 0;
};

// Not a code point (above U+10FFFF): the code_point of an ill-formed byte.
inline constexpr uint32_t kIllFormedUtf8 = 0xFFFFFFFF;

// The character starting at byte `i` of `text` (i < text.size()). A byte
// that does not start a well-formed sequence there (a stray continuation
// byte, a truncated sequence, an overlong encoding, a UTF-16 surrogate, a
// code point above U+10FFFF) gives {kIllFormedUtf8, 1}.
Utf8Char DecodeUtf8At(absl::string_view text, size_t i);

// The byte offset in `text` of the first ill-formed UTF-8 sequence (as
// DecodeUtf8At defines it), or absl::string_view::npos when all of `text` is
// well-formed.
size_t FirstInvalidUtf8(absl::string_view text);

}  // namespace zosched
