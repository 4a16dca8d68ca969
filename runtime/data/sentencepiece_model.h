// libsentencepiece (Debian's libsentencepiece-dev) behind a header that names
// none of it. Its sentencepiece_processor.h declares absl::string_view as
// std::string_view, which clashes with Debian's Abseil (where it is a class
// of its own), so only sentencepiece_model.cc includes it, and that file
// includes no Abseil header; this header uses the standard library only.
// The library is opened at run time (libsentencepiece.so.0), apart from the
// process's own protobuf: sentencepiece_model.cc says why.
//
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}  // namespace sentencepiece

namespace zosched {

class SentencePieceModel {
 public:
  // What a model's normalizer does around the text (NormalizerSpec).
  struct Spaces {
    bool add_dummy_prefix = true;          // a "▁" before the text
    bool remove_extra_whitespaces = true;  // leading, trailing, repeated
  };

  // Loads a serialized ModelProto (a tokenizer.model's bytes). With
  // `dummy_prefix` false, its normalizer's add_dummy_prefix is cleared
  // first, so that Encode puts no "▁" before the text. Returns null and sets
  // `*error` on failure: SentencePiece's message, what is wrong in the
  // protobuf, or why libsentencepiece could not be opened (not installed;
  // not Available()).
  static std::unique_ptr<SentencePieceModel> Load(const std::string& serialized,
                                                  bool dummy_prefix, std::string* error);

  // Whether this build can open libsentencepiece: not with AddressSanitizer
  // or ThreadSanitizer (sentencepiece_model.cc says why).
  static bool Available();

  // The model's normalizer settings, read from a serialized ModelProto.
  // Returns false and sets `*error` if the protobuf cannot be read.
  static bool ReadSpaces(const std::string& serialized, Spaces* spaces, std::string* error);

  ~SentencePieceModel();

  // SentencePiece's ids of `text` (EncodeAsIds): never fails; ill-formed
  // UTF-8 becomes U+FFFD, as SentencePiece's normalizer makes it.
  std::vector<int> Encode(std::string_view text) const;

  // SentencePiece's text of `ids` (DecodeIds), each in [0, size()): control
  // pieces ("<s>", "</s>") give nothing, byte pieces ("<0x0A>") their bytes.
  std::string Decode(const std::vector<int>& ids) const;

  // The id of piece `piece` (e.g. "▁great", "<s>"), or -1.
  int PieceId(std::string_view piece) const;

  // The number of pieces; ids are 0 .. size() - 1.
  int size() const;

  // The BOS piece ("<s>"), or "" when the model has none.
  std::string BosPiece() const;

 private:
  SentencePieceModel();
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;  // in the library's memory
};

}  // namespace zosched
