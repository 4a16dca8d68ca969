// Unicode Normalization Form C (canonical composition), the "NFC"
// normalizer of Hugging Face's tokenizers that Qwen's tokenizer.json runs
// before pre-tokenization: "e\u0301" (e + combining acute) becomes "\u00e9".
// utf8proc does the work (Unicode 15.0 in Debian 12's libutf8proc 2.8).
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace zosched {

// `text` in NFC. Any bytes are accepted: each stretch of well-formed UTF-8
// (utf8.h) is normalized on its own and ill-formed bytes are kept as they
// are, so ASCII and text already in NFC come back unchanged.
std::string NormalizeNfc(absl::string_view text);

}  // namespace zosched
