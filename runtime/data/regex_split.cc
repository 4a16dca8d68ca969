#include "runtime/data/regex_split.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "runtime/data/utf8.h"

namespace zosched {
namespace {

std::string Pcre2Message(int error) {
  PCRE2_UCHAR buffer[256];
  const int length = pcre2_get_error_message(error, buffer, sizeof(buffer));
  return length < 0 ? absl::StrCat("PCRE2 error ", error)
                    : std::string(reinterpret_cast<const char*>(buffer), length);
}

// What a match may use when the defaults run out (a long run that a pattern
// such as \s+(?!\S) backtracks over): the JIT stack and the interpreter's
// heap grow to these, with no limit on the match steps. The readers limit
// a text to 1 MiB (text_lines.h), which needs far less.
constexpr PCRE2_SIZE kLargeJitStackBytes = PCRE2_SIZE{1} << 30;
constexpr uint32_t kLargeHeapKib = uint32_t{1} << 22;  // 4 GiB

struct MatchContextDeleter {
  void operator()(pcre2_match_context* c) const { pcre2_match_context_free(c); }
};
struct JitStackDeleter {
  void operator()(pcre2_jit_stack* s) const { pcre2_jit_stack_free(s); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* d) const { pcre2_match_data_free(d); }
};

}  // namespace

struct RegexSplitter::Code {
  explicit Code(pcre2_code* c) : code(c) {}
  ~Code() { pcre2_code_free(code); }
  Code(const Code&) = delete;
  Code& operator=(const Code&) = delete;
  pcre2_code* code;
};

absl::StatusOr<RegexSplitter> RegexSplitter::Compile(absl::string_view pattern, bool literal) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // A literal takes no PCRE2_UCP (PCRE2 refuses the pair; it has no classes
  // to apply it to).
  const uint32_t options =
      PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   options, &error, &offset, nullptr);
  if (code == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("regular expression '", pattern, "': ",
                                                   Pcre2Message(error), " at offset ", offset));
  }
  // Without JIT (a library built without it) pcre2_match interprets.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return RegexSplitter(std::string(pattern), std::make_shared<const Code>(code));
}

void RegexSplitter::Split(absl::string_view text, std::vector<absl::string_view>* pieces) const {
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const size_t n = text.size();
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(
      pcre2_match_data_create_from_pattern(code_->code, nullptr));
  CHECK(match != nullptr) << "out of memory for a PCRE2 match";
  // Made on the first match that needs it.
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> large_context;
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> large_stack;

  size_t start = 0;  // where the next search starts
  size_t gap = 0;    // where the text not yet in a piece starts
  while (start < n) {
    int rc = pcre2_match(code_->code, subject, n, start, 0, match.get(), nullptr);
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
      // A resource limit: search again with large ones.
      if (large_context == nullptr) {
        large_context.reset(pcre2_match_context_create(nullptr));
        large_stack.reset(pcre2_jit_stack_create(32 * 1024, kLargeJitStackBytes, nullptr));
        CHECK(large_context != nullptr && large_stack != nullptr)
            << "out of memory for a PCRE2 match context";
        pcre2_jit_stack_assign(large_context.get(), nullptr, large_stack.get());
        pcre2_set_match_limit(large_context.get(), UINT32_MAX);
        pcre2_set_depth_limit(large_context.get(), UINT32_MAX);
        pcre2_set_heap_limit(large_context.get(), kLargeHeapKib);
      }
      rc = pcre2_match(code_->code, subject, n, start, 0, match.get(), large_context.get());
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    CHECK(rc > 0) << "PCRE2 matching '" << pattern_ << "' failed on a text of " << n
                  << " bytes: " << Pcre2Message(rc);
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    const size_t begin = ovector[0], end = ovector[1];
    if (end == begin) {  // an empty match: search again one character on
      if (begin >= n) break;
      start = begin + DecodeUtf8At(text, begin).length;
      continue;
    }
    if (begin > gap) pieces->push_back(text.substr(gap, begin - gap));
    pieces->push_back(text.substr(begin, end - begin));
    gap = start = end;
  }
  if (gap < n) pieces->push_back(text.substr(gap));
}

}  // namespace zosched
