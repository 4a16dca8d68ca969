#include "runtime/data/nfc.h"

#include <utf8proc.h>

#include <cstdlib>

#include "base/check.h"
#include "runtime/data/utf8.h"

namespace zosched {
namespace {

// Appends the NFC of `run`, well-formed UTF-8, to `out`.
void AppendNfc(absl::string_view run, std::string* out) {
  bool ascii = true;
  for (char c : run) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) {  // its own NFC
    out->append(run.data(), run.size());
    return;
  }
  utf8proc_uint8_t* normalized = nullptr;
  const utf8proc_ssize_t length =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(run.data()),
                   static_cast<utf8proc_ssize_t>(run.size()), &normalized,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  CHECK(length >= 0) << "utf8proc could not normalize well-formed UTF-8: "
                     << utf8proc_errmsg(length);
  out->append(reinterpret_cast<const char*>(normalized), static_cast<size_t>(length));
  std::free(normalized);
}

}  // namespace

std::string NormalizeNfc(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t run_start = 0;
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = DecodeUtf8At(text, i);
    if (c.code_point == kIllFormedUtf8) {
      AppendNfc(text.substr(run_start, i - run_start), &out);
      out.push_back(text[i]);
      run_start = i + 1;
    }
    i += c.length;
  }
  AppendNfc(text.substr(run_start), &out);
  return out;
}

}  // namespace zosched
