// The tokenizer of a directory, in whichever of the three layouts Hugging
// Face's model repositories ship it (the first present wins):
//
//   tokenizer.model            SentencePiece (LLaMA-2): sentencepiece_tokenizer.h.
//                              First, because LLaMA-2's repositories also ship
//                              a tokenizer.json, a conversion with byte
//                              fallback that tokenizer_json.h does not read.
//   tokenizer.json             byte-level BPE (Llama-3.x, Qwen2.5, Qwen3,
//                              GPT-2): tokenizer_json.h. Qwen's repositories
//                              also ship vocab.json and merges.txt, which
//                              lack its pre-tokenizer and are not read.
//   vocab.json + merges.txt    GPT-2's files (OPT, GPT-2, the synthetic
//                              task): bpe_tokenizer.h.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/data/tokenizer.h"

namespace zosched {

// Reads the tokenizer in directory `dir`. `gpt2_files_bos` is the BOS token
// for vocab.json + merges.txt, which do not name one (OPT's tokenizer puts
// "</s>" first, GPT-2's nothing: "" for none); the other layouts name
// their own.
//
// Errors: NotFound naming `dir` and the three layouts when none is there
// (or vocab.json without merges.txt, or the reverse); the reader's errors,
// which name the file.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& dir,
                                                        const std::string& gpt2_files_bos);

}  // namespace zosched
