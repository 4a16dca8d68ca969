#include "runtime/task.h"

#include <filesystem>

#include <algorithm>
#include <map>
#include <memory>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/temporary_directory.h"
#include "runtime/data/boolq.h"
#include "runtime/data/load_tokenizer.h"
#include "runtime/data/prompts.h"
#include "runtime/data/sst2.h"
#include "runtime/data/synthetic_task.h"
#include "runtime/zo/philox.h"

namespace zosched {
namespace {

constexpr uint64_t kSyntheticSeed = 20261121;

// A permutation of [0, n) for epoch `epoch`: Fisher-Yates with Philox draws.
std::vector<int32_t> EpochOrder(uint64_t seed, int64_t epoch, int n) {
  std::vector<int32_t> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  const Uint2 key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  for (int i = n - 1; i > 0; --i) {
    const Uint4 counter = {{static_cast<uint32_t>(i), static_cast<uint32_t>(epoch),
                            static_cast<uint32_t>(epoch >> 32), 0x64617461u /* "data" */}};
    const uint32_t draw = Philox4x32_10(counter, key).v[0];
    std::swap(order[i], order[draw % (i + 1)]);
  }
  return order;
}

template <typename Example>
absl::Status Encode(const Tokenizer& tokenizer, const PromptTemplate& prompt,
                    const std::vector<Example>& examples, const ModelSpec& model, int seq_len,
                    int32_t pad, const std::string& source, EncodedExamples* out) {
  out->seq_len = seq_len;
  for (size_t i = 0; i < examples.size(); ++i) {
    ASSIGN_OR_RETURN(EncodedExample e, EncodeExample(tokenizer, prompt, examples[i], seq_len));
    for (int32_t id : e.ids) {
      if (id >= model.vocab_size()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s example %d: token id %d is outside model '%s' (vocab_size %d): the model "
            "and the tokenizer do not belong together",
            source, i, id, model.name(), model.vocab_size()));
      }
    }
    const size_t at = out->tokens.size();
    out->tokens.resize(at + seq_len, pad);
    std::copy(e.ids.begin(), e.ids.end(), out->tokens.begin() + at);
    out->lengths.push_back(e.length);
    out->labels.push_back(e.label);
  }
  return absl::OkStatus();
}

}  // namespace

void TrainingTask::FillStep(int64_t step, int batch, uint64_t seed, StepBatch* out) const {
  const int n = train.size();
  const int seq = train.seq_len;
  out->tokens.resize(static_cast<int64_t>(batch) * seq);
  out->lengths.resize(batch);
  out->labels.resize(batch);
  for (int i = 0; i < batch; ++i) {
    const int64_t position = step * batch + i;
    const int64_t epoch = position / n;
    if (epoch != order_epoch_ || seed != order_seed_) {
      order_ = EpochOrder(seed, epoch, n);
      order_epoch_ = epoch;
      order_seed_ = seed;
    }
    const int example = order_[position % n];
    std::copy(train.tokens.begin() + static_cast<int64_t>(example) * seq,
              train.tokens.begin() + static_cast<int64_t>(example + 1) * seq,
              out->tokens.begin() + static_cast<int64_t>(i) * seq);
    out->lengths[i] = train.lengths[example];
    out->labels[i] = train.labels[example];
  }
}

EncodedExamples TrainingTask::EvalSubset(int n) const {
  if (n <= 0 || n >= dev.size()) return dev;
  EncodedExamples subset;
  subset.seq_len = dev.seq_len;
  subset.tokens.assign(dev.tokens.begin(), dev.tokens.begin() + static_cast<int64_t>(n) * dev.seq_len);
  subset.lengths.assign(dev.lengths.begin(), dev.lengths.begin() + n);
  subset.labels.assign(dev.labels.begin(), dev.labels.begin() + n);
  return subset;
}

absl::Status WriteSyntheticTask(const std::string& dir) {
  return zosched::WriteSyntheticTask(dir, kSyntheticSeed, 4096, 512);
}

absl::StatusOr<TrainingTask> LoadTask(const std::string& dir, const std::string& task,
                                      const ModelSpec& model, int seq_len) {
  // GPT-2's files do not name the BOS: OPT's tokenizer puts "</s>" first,
  // GPT-2's nothing (the synthetic task's files are OPT's).
  ASSIGN_OR_RETURN(const std::unique_ptr<Tokenizer> loaded,
                   LoadTokenizer(dir, model.family() == GPT2 ? "" : "</s>"));
  const Tokenizer& tokenizer = *loaded;
  int32_t pad = tokenizer.TokenId("<pad>");
  if (pad < 0) pad = 1;
  TrainingTask t;
  if (task == "sst2") {
    const PromptTemplate prompt = Sst2Template(tokenizer);
    ASSIGN_OR_RETURN(t.label_words, LabelWordIds(tokenizer, prompt));
    ASSIGN_OR_RETURN(std::vector<Sst2Example> train, ReadSst2Tsv(dir + "/train.tsv"));
    ASSIGN_OR_RETURN(std::vector<Sst2Example> dev, ReadSst2Tsv(dir + "/dev.tsv"));
    RETURN_IF_ERROR(Encode(tokenizer, prompt, train, model, seq_len, pad, dir + "/train.tsv", &t.train));
    RETURN_IF_ERROR(Encode(tokenizer, prompt, dev, model, seq_len, pad, dir + "/dev.tsv", &t.dev));
  } else if (task == "boolq") {
    const PromptTemplate prompt = BoolqTemplate(tokenizer);
    ASSIGN_OR_RETURN(t.label_words, LabelWordIds(tokenizer, prompt));
    ASSIGN_OR_RETURN(std::vector<BoolqExample> train, ReadBoolqJsonl(dir + "/train.jsonl"));
    ASSIGN_OR_RETURN(std::vector<BoolqExample> dev, ReadBoolqJsonl(dir + "/val.jsonl"));
    RETURN_IF_ERROR(Encode(tokenizer, prompt, train, model, seq_len, pad, dir + "/train.jsonl", &t.train));
    RETURN_IF_ERROR(Encode(tokenizer, prompt, dev, model, seq_len, pad, dir + "/val.jsonl", &t.dev));
  } else {
    return absl::InvalidArgumentError("--task=" + task + ": expected sst2 or boolq");
  }
  for (int32_t id : t.label_words) {
    if (id >= model.vocab_size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "label word token %d is outside model '%s' (vocab_size %d)", id, model.name(),
          model.vocab_size()));
    }
  }
  return t;
}

absl::StatusOr<TrainingTask> LoadTaskElsewhere(const std::string& data, const std::string& task,
                                               const ModelSpec& model, int seq_len) {
  if (data != "synthetic") return LoadTask(data, task, model, seq_len);
  ASSIGN_OR_RETURN(const std::string scratch,
                   MakeTemporaryDirectory("zosched-task", "the synthetic task"));
  const absl::Status written = WriteSyntheticTask(scratch);
  absl::StatusOr<TrainingTask> loaded =
      written.ok() ? LoadTask(scratch, task, model, seq_len) : written;
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  return loaded;
}

}  // namespace zosched
