#include "runtime/data/synthetic_task.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/textproto.h"
#include "gtest/gtest.h"
#include "runtime/data/bpe_tokenizer.h"
#include "runtime/data/prompts.h"
#include "runtime/data/sst2.h"

namespace zosched {
namespace {

std::string Dir(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/synthetic_task_test_", name);
}

std::string Read(const std::string& path) {
  std::string s;
  EXPECT_TRUE(ReadFileToString(path, &s).ok()) << path;
  return s;
}

// Positive minus negative cue words: the rule the labels follow.
int CueRule(const std::string& sentence) {
  int score = 0;
  for (absl::string_view word : absl::StrSplit(sentence, ' ')) {
    for (int label : {0, 1}) {
      for (const std::string& cue : SyntheticCueWords(label)) {
        if (word == cue) score += label == 1 ? 1 : -1;
      }
    }
  }
  return score > 0 ? 1 : 0;
}

double Accuracy(const std::vector<Sst2Example>& examples) {
  int correct = 0;
  for (const Sst2Example& e : examples) correct += CueRule(e.sentence) == e.label;
  return static_cast<double>(correct) / examples.size();
}

TEST(SyntheticTaskTest, ReadsThroughTheRealReadersAndIsLearnable) {
  const std::string dir = Dir("main");
  ASSERT_TRUE(WriteSyntheticTask(dir, 42, 2000, 500).ok());
  absl::StatusOr<BpeTokenizer> tok =
      BpeTokenizer::FromFiles(dir + "/vocab.json", dir + "/merges.txt", "</s>");
  ASSERT_TRUE(tok.ok()) << tok.status();
  absl::StatusOr<std::vector<Sst2Example>> train = ReadSst2Tsv(dir + "/train.tsv");
  absl::StatusOr<std::vector<Sst2Example>> dev = ReadSst2Tsv(dir + "/dev.tsv");
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_EQ(train->size(), 2000u);
  ASSERT_EQ(dev->size(), 500u);

  // OPT's specials at OPT's ids.
  EXPECT_EQ(tok->TokenId("<s>"), 0);
  EXPECT_EQ(tok->TokenId("<pad>"), 1);
  EXPECT_EQ(tok->TokenId("</s>"), 2);
  EXPECT_EQ(tok->TokenId("<unk>"), 3);
  EXPECT_LT(tok->vocab_size(), 1000);

  // The prompt's words and every task word (with its space) are one token.
  absl::StatusOr<std::vector<int32_t>> labels = LabelWordIds(*tok, Sst2Template(*tok));
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(*labels, (std::vector<int32_t>{tok->TokenId("\u0120terrible"),
                                           tok->TokenId("\u0120great")}));
  EXPECT_EQ(tok->Encode(" It was").size(), 2u);
  for (const std::string& word : SyntheticTaskWords()) {
    EXPECT_EQ(tok->Encode(" " + word).size(), 1u) << word;
  }

  // Sentences encode compactly and decode back; prompts fit 32 tokens.
  int max_length = 0;
  for (const Sst2Example& e : *dev) {
    absl::StatusOr<std::string> decoded = tok->Decode(tok->Encode(e.sentence));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, e.sentence);
    absl::StatusOr<EncodedExample> encoded = EncodeExample(*tok, Sst2Template(*tok), e, 1000);
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    max_length = std::max<int>(max_length, encoded->length);
  }
  EXPECT_LE(max_length, 32);

  // Learnable: the cue rule is exact on dev, ~98% on (noisy) train; labels
  // balanced.
  EXPECT_GT(Accuracy(*dev), 0.95);
  EXPECT_EQ(Accuracy(*dev), 1.0);
  EXPECT_GT(Accuracy(*train), 0.95);
  EXPECT_LT(Accuracy(*train), 1.0);  // the 2% noise is there
  int positive = 0;
  for (const Sst2Example& e : *train) positive += e.label;
  EXPECT_GT(positive, 800);
  EXPECT_LT(positive, 1200);
}

TEST(SyntheticTaskTest, DeterministicFromTheSeed) {
  ASSERT_TRUE(WriteSyntheticTask(Dir("a"), 7, 100, 50).ok());
  ASSERT_TRUE(WriteSyntheticTask(Dir("b"), 7, 300, 50).ok());
  ASSERT_TRUE(WriteSyntheticTask(Dir("c"), 8, 100, 50).ok());
  for (const char* file : {"/vocab.json", "/merges.txt", "/dev.tsv"}) {
    EXPECT_EQ(Read(Dir("a") + file), Read(Dir("b") + file)) << file;
  }
  // The first 100 of 300 train examples are the 100.
  EXPECT_EQ(Read(Dir("b") + "/train.tsv").substr(0, Read(Dir("a") + "/train.tsv").size()),
            Read(Dir("a") + "/train.tsv"));
  EXPECT_NE(Read(Dir("a") + "/train.tsv"), Read(Dir("c") + "/train.tsv"));
  EXPECT_NE(Read(Dir("a") + "/dev.tsv"), Read(Dir("c") + "/dev.tsv"));
  EXPECT_EQ(Read(Dir("a") + "/vocab.json"), Read(Dir("c") + "/vocab.json"));
}

TEST(SyntheticTaskTest, Errors) {
  EXPECT_EQ(WriteSyntheticTask(Dir("neg"), 1, -1, 5).code(), absl::StatusCode::kInvalidArgument);
  // A directory path that runs through a regular file.
  ASSERT_TRUE(WriteSyntheticTask(Dir("file"), 1, 1, 1).ok());
  EXPECT_FALSE(WriteSyntheticTask(Dir("file") + "/dev.tsv/sub", 1, 1, 1).ok());
}

}  // namespace
}  // namespace zosched
