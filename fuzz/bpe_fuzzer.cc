// libFuzzer target: any bytes as the GPT-2 BPE tokenizer's two files
// (runtime/data/bpe_tokenizer.h): the first 2 bytes (little-endian) give the
// length of vocab.json, which follows; merges.txt is the rest. A tokenizer
// that loads must encode any text and decode it back byte for byte.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/check.h"
#include "runtime/data/bpe_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t vocab_bytes = std::min<size_t>(data[0] | data[1] << 8, size - 2);
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  absl::StatusOr<zosched::BpeTokenizer> tokenizer = zosched::BpeTokenizer::FromStrings(
      rest.substr(0, vocab_bytes), "vocab.json", rest.substr(vocab_bytes), "merges.txt");
  if (!tokenizer.ok()) return 0;
  // Contractions, letters, digits, punctuation, runs of whitespace, UTF-8
  // and bytes that are not UTF-8.
  static const std::string kText =
      "It's the 2nd   test, isn't it?\n\t caf\xc3\xa9 \xe2\x98\x95 \xff\x80!! 12345 they'll";
  const std::vector<int32_t> ids = tokenizer->Encode(kText);
  absl::StatusOr<std::string> decoded = tokenizer->Decode(ids);
  CHECK(decoded.ok()) << decoded.status();
  CHECK(*decoded == kText) << "Decode(Encode(text)) is '" << *decoded << "'";
  return 0;
}
