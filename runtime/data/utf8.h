// UTF-8 well-formedness (RFC 3629): what the text readers check before they
// tokenize, so that a file in another encoding is an error naming the place
// instead of silently different tokens.
#pragma once

#include <cstddef>

#include "absl/strings/string_view.h"

namespace zosched {

// The byte offset in `text` of the first ill-formed UTF-8 sequence (a stray
// continuation byte, a truncated sequence, an overlong encoding, a UTF-16
// surrogate, a code point above U+10FFFF), or absl::string_view::npos when
// all of `text` is well-formed.
size_t FirstInvalidUtf8(absl::string_view text);

}  // namespace zosched
