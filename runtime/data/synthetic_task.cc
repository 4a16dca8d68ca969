#include "runtime/data/synthetic_task.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"
#include "runtime/data/bpe_tokenizer.h"

namespace zosched {
namespace {

const std::vector<std::string>& Nouns() {
  static const auto* words = new std::vector<std::string>{
      "movie", "film", "plot", "story", "acting", "cast",
      "script", "ending", "music", "director", "dialogue", "pacing"};
  return *words;
}
const std::vector<std::string>& Verbs() {
  static const auto* words = new std::vector<std::string>{"was", "felt", "seemed", "is"};
  return *words;
}
const std::vector<std::string>& Adverbs() {
  static const auto* words = new std::vector<std::string>{"quite", "really", "very", "rather", "truly"};
  return *words;
}
const std::vector<std::string>& NeutralAdjectives() {
  static const auto* words = new std::vector<std::string>{
      "long", "short", "loud", "quiet", "simple", "modern", "foreign", "colorful"};
  return *words;
}
// Words of the SST-2 prompt and its label words.
const std::vector<std::string>& PromptWords() {
  static const auto* words = new std::vector<std::string>{"It", "was", "terrible", "great"};
  return *words;
}

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fixed, portable.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) for small n (the modulo bias is below 2^-58).
  int Below(int n) { return static_cast<int>(Next() % static_cast<uint64_t>(n)); }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  const std::string& Pick(const std::vector<std::string>& words) {
    return words[Below(static_cast<int>(words.size()))];
  }

 private:
  uint64_t state_;
};

struct Example {
  std::string sentence;
  int label;
};

Example MakeExample(SplitMix64& rng, double label_noise) {
  Example e;
  const int label = rng.Below(2);
  const int clauses = 1 + rng.Below(3);
  const int cue_clause = rng.Below(clauses);  // at least this one has a cue
  for (int c = 0; c < clauses; ++c) {
    if (c > 0) e.sentence += rng.Below(2) ? " and " : " but ";
    absl::StrAppend(&e.sentence, "the ", rng.Pick(Nouns()), " ", rng.Pick(Verbs()), " ");
    if (rng.Below(3) == 0) absl::StrAppend(&e.sentence, rng.Pick(Adverbs()), " ");
    const bool cue = c == cue_clause || rng.Below(2) == 0;
    e.sentence += cue ? rng.Pick(SyntheticCueWords(label)) : rng.Pick(NeutralAdjectives());
  }
  e.label = rng.Unit() < label_noise ? 1 - label : label;
  return e;
}

absl::Status WriteTsv(const std::string& path, uint64_t seed, int64_t n, double label_noise) {
  SplitMix64 rng(seed);
  std::string text = "sentence\tlabel\n";
  for (int64_t i = 0; i < n; ++i) {
    const Example e = MakeExample(rng, label_noise);
    absl::StrAppend(&text, e.sentence, "\t", e.label, "\n");
  }
  return WriteFile(path, text);
}

}  // namespace

const std::vector<std::string>& SyntheticCueWords(int label) {
  static const auto* positive = new std::vector<std::string>{
      "wonderful", "excellent", "delightful", "brilliant", "charming",
      "superb",    "moving",    "enjoyable",  "beautiful", "funny"};
  static const auto* negative = new std::vector<std::string>{
      "awful", "boring", "dull",    "dreadful", "tedious",
      "bland", "clumsy", "painful", "lifeless", "forgettable"};
  return label == 1 ? *positive : *negative;
}

std::vector<std::string> SyntheticTaskWords() {
  std::vector<std::string> words = {"the", "and", "but"};
  for (const auto* list : {&Nouns(), &Verbs(), &Adverbs(), &NeutralAdjectives(),
                           &SyntheticCueWords(1), &SyntheticCueWords(0)}) {
    words.insert(words.end(), list->begin(), list->end());
  }
  return words;
}

absl::Status WriteSyntheticTask(const std::string& dir, uint64_t seed, int64_t n_train,
                                int64_t n_eval) {
  if (n_train < 0 || n_eval < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("synthetic task: negative example count (", n_train, ", ", n_eval, ")"));
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::ErrnoToStatus(error.value(), absl::StrCat(dir, ": cannot create directory"));
  }

  // Vocabulary: OPT's specials, the byte symbols, then a left-to-right chain
  // of merges per "Ġword". Every merge's left side starts with Ġ, which only
  // a pre-token's first byte can be, so chains never interfere: any word of
  // the list encodes to its single token whatever the ranks.
  nlohmann::json vocab = nlohmann::json::object();
  int id = 0;
  for (const char* special : {"<s>", "<pad>", "</s>", "<unk>"}) vocab[special] = id++;
  for (int b = 0; b < 256; ++b) vocab[ByteToUnicode(static_cast<uint8_t>(b))] = id++;
  std::string merges = "#version: 0.2\n";
  std::vector<std::string> words = SyntheticTaskWords();
  words.insert(words.end(), PromptWords().begin(), PromptWords().end());
  for (const std::string& word : words) {
    std::string prefix = ByteToUnicode(' ');
    for (char c : word) {
      const std::string symbol = ByteToUnicode(static_cast<uint8_t>(c));
      const std::string next = prefix + symbol;
      if (!vocab.contains(next)) {
        absl::StrAppend(&merges, prefix, " ", symbol, "\n");
        vocab[next] = id++;
      }
      prefix = next;
    }
  }
  RETURN_IF_ERROR(WriteFile(dir + "/vocab.json", vocab.dump(2) + "\n"));
  RETURN_IF_ERROR(WriteFile(dir + "/merges.txt", merges));
  // Separate streams for train and dev, both from `seed`.
  SplitMix64 streams(seed);
  const uint64_t train_seed = streams.Next();
  const uint64_t dev_seed = streams.Next();
  RETURN_IF_ERROR(WriteTsv(dir + "/train.tsv", train_seed, n_train, kSyntheticTrainLabelNoise));
  RETURN_IF_ERROR(WriteTsv(dir + "/dev.tsv", dev_seed, n_eval, 0.0));
  return absl::OkStatus();
}

}  // namespace zosched
