// Splitting text at the matches of a regular expression, as Hugging Face's
// tokenizers does for a Split pre-tokenizer with behavior "Isolated": every
// match is a piece, and so is every stretch of text between two matches.
// Pre-tokenizers' patterns (Llama-3's, Qwen's, GPT-2's) run as written, with
// PCRE2 in UTF mode with Unicode properties (PCRE2_UTF | PCRE2_UCP: \p{L},
// \p{N}, \s and case-insensitive (?i:...) over all of Unicode, PCRE2's
// Unicode tables), JIT-compiled where the library can.
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace zosched {

class RegexSplitter {
 public:
  // Compiles `pattern`, a regular expression (or, with `literal`, a string
  // to match as it is). Errors: InvalidArgument with PCRE2's message and the
  // offset in the pattern where it fails.
  static absl::StatusOr<RegexSplitter> Compile(absl::string_view pattern, bool literal = false);

  // Appends the pieces of `text` to `pieces` (views into `text`, in order,
  // none empty; joined they give `text` back): each leftmost match, then
  // the search goes on where it ended (after one more character when it
  // was empty, which is never a piece). Ill-formed UTF-8 is accepted: an
  // ill-formed byte matches nothing (PCRE2_MATCH_INVALID_UTF), so it lands
  // in a stretch between matches.
  void Split(absl::string_view text, std::vector<absl::string_view>* pieces) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Code;  // the compiled pattern
  RegexSplitter(std::string pattern, std::shared_ptr<const Code> code)
      : pattern_(std::move(pattern)), code_(std::move(code)) {}

  std::string pattern_;
  std::shared_ptr<const Code> code_;
};

}  // namespace zosched
