// Prints a model's exact accounting for humans.
//
//   bazel run //models:model_info -- --model=opt-175b [--seq_len=2048]
//       [--dtype=FP16] [--label_words=2] [--tensors]
//
// --model: a zoo name or the path of a ModelSpec textproto. --seq_len: the
// tokens per sequence the FLOPs and activations are counted at; by default
// (0) the model's own max_positions, so every model works without it; an
// explicit length must lie in 1 to max_positions. Command line and exit
// status as every tool's (base/command_line.h): 0 on success; 2 for an
// unknown model, a malformed file or a bad flag.
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/command_line.h"
#include "base/flag_checks.h"
#include "base/status_macros.h"
#include "base/user_path.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "models/model_tensors.h"
#include "models/model_zoo.h"

ABSL_FLAG(std::string, model, "", "zoo name (e.g. opt-1.3b) or ModelSpec textproto path");
ABSL_FLAG(int64_t, seq_len, 0,
          "sequence length for FLOPs and activations, 1 to the model's max_positions "
          "(default 0: the model's max_positions)");
ABSL_FLAG(std::string, dtype, "",
          "dtype for activations and the label slice: FP32, FP16 or BF16 "
          "(default: the model's weight_dtype)");
ABSL_FLAG(int64_t, label_words, 2, "label words of the classification prompt");
ABSL_FLAG(bool, tensors, false, "also list the tensors of block 0");

namespace zosched {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// 1234567 -> "1,234,567".
std::string Grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Shape(const std::vector<int64_t>& shape) {
  return "[" + absl::StrJoin(shape, ", ") + "]";
}

void PrintAccounting(const ModelSpec& spec, const std::string& source,
                     int64_t seq_len, DType dtype, int64_t label_words) {
  const int64_t total = TotalParams(spec);
  const int64_t block = BlockParams(spec);
  std::printf("model: %s (%s) from %s\n", spec.name().c_str(),
              Family_Name(spec.family()).c_str(), source.c_str());
  std::printf(
      "shape: hidden %ld, layers %ld, heads %ld (kv %ld, head dim %ld), ffn "
      "%ld, vocab %ld, positions %ld\n",
      spec.hidden_size(), spec.num_layers(), spec.num_heads(), KvHeads(spec),
      HeadDim(spec), spec.ffn_size(), spec.vocab_size(), spec.max_positions());
  std::string positions = Positional_Name(spec.positional());
  if (spec.positional() == ROTARY) {
    absl::StrAppendFormat(&positions, " (theta %g", spec.rope_theta());
    if (spec.has_rope_scaling()) {
      const RopeScaling& r = spec.rope_scaling();
      absl::StrAppendFormat(&positions, ", llama3 scaling: factor %g, low %g, high %g, original %d",
                            r.factor(), r.low_freq_factor(), r.high_freq_factor(),
                            r.original_max_positions());
    }
    positions += ")";
  }
  std::printf("block: %s %s (eps %g), %s, %s%s%s; %s head\n",
              NormPlacement_Name(spec.norm_placement()).c_str(), Norm_Name(spec.norm()).c_str(),
              NormEps(spec), Activation_Name(spec.activation()).c_str(), positions.c_str(),
              spec.qkv_bias() ? ", q/k/v biases" : spec.linear_bias() ? ", biases" : "",
              spec.qk_norm() ? ", QK-norm" : "", spec.tied_lm_head() ? "tied" : "untied");
  std::printf("params: %ld\n", total);
  std::printf("  embedding:  %s\n", Grouped(EmbeddingParams(spec)).c_str());
  std::printf("  blocks:     %ld x %s = %s (%.2f%%)\n", spec.num_layers(),
              Grouped(block).c_str(),
              Grouped(spec.num_layers() * block).c_str(),
              100.0 * spec.num_layers() * block / total);
  std::printf("  final norm: %s\n", Grouped(FinalNormParams(spec)).c_str());
  std::printf("  head:       %s%s\n", Grouped(HeadParams(spec)).c_str(),
              spec.tied_lm_head() ? " (LM head tied to the token embeddings)" : "");
  std::printf("bytes (GiB = 2^30 bytes):\n");
  for (DType d : {FP32, FP16}) {
    std::printf("  %s: one block %s B (%.3f GiB), whole model %.2f GiB\n",
                DType_Name(d).c_str(), Grouped(BlockBytes(spec, d)).c_str(),
                BlockBytes(spec, d) / kGiB, total * DTypeBytes(d) / kGiB);
  }
  const int64_t flops = BlockForwardFlopsPerToken(spec, seq_len);
  std::printf("forward FLOPs per token at seq_len %ld: one block %s, all blocks %.4g "
              "(dual forward: x2)\n",
              seq_len, Grouped(flops).c_str(),
              static_cast<double>(flops) * spec.num_layers());
  const DualForwardActivationBytes act =
      DualForwardActivationBytesPerToken(spec, seq_len, dtype);
  std::printf(
      "dual-forward activations per token per block at seq_len %ld, %s: carried "
      "%s B, workspace %s B, total %s B\n",
      seq_len, DType_Name(dtype).c_str(), Grouped(act.carried).c_str(),
      Grouped(act.workspace).c_str(), Grouped(act.total()).c_str());
  std::printf("label-word LM head slice (%ld words, %s): %s B\n", label_words,
              DType_Name(dtype).c_str(),
              Grouped(LabelHeadSliceBytes(spec, label_words, dtype)).c_str());
}

absl::Status Run() {
  const std::string model = absl::GetFlag(FLAGS_model);
  if (model.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--model is required: a zoo name (%s) or the path of a ModelSpec textproto",
                        absl::StrJoin(ZooModelNames(), ", ")));
  }
  const std::string zoo_path = ZooModelPath(model);
  const std::string source = zoo_path.empty() ? ResolveUserPath(model) : zoo_path;
  ASSIGN_OR_RETURN(const ModelSpec spec, LoadModelSpec(model));
  ASSIGN_OR_RETURN(const DType flag_dtype, ParseDTypeFlag("dtype", absl::GetFlag(FLAGS_dtype)));
  const DType dtype = flag_dtype == DTYPE_UNSPECIFIED ? spec.weight_dtype() : flag_dtype;
  // 0, the default, is the model's whole context; anything else is checked.
  const int64_t seq_len_flag = absl::GetFlag(FLAGS_seq_len);
  const int64_t seq_len = seq_len_flag == 0 ? spec.max_positions() : seq_len_flag;
  const int64_t label_words = absl::GetFlag(FLAGS_label_words);
  RETURN_IF_ERROR(CheckFlagRange("seq_len", seq_len, 1, spec.max_positions(),
                                 "tokens, up to the model's max_positions; 0 or no flag for "
                                 "max_positions itself"));
  RETURN_IF_ERROR(CheckFlagRange("label_words", label_words, 1, spec.vocab_size(),
                                 "label words, up to the vocabulary"));
  PrintAccounting(spec, source, seq_len, dtype, label_words);
  if (absl::GetFlag(FLAGS_tensors)) {
    std::printf("block 0 tensors:\n");
    for (const TensorSpec& t : BlockTensors(spec, 0)) {
      std::printf("  %-50s %s%s\n", t.name.c_str(), Shape(t.shape).c_str(),
                  t.weight_decay() ? "" : "  (no weight decay)");
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace zosched

int main(int argc, char** argv) {
  zosched::ParseCommandLineOrExit(
      argc, argv,
      {"model_info", "",
       "Prints a model's exact accounting (--model): its shape, parameters per part, bytes per\n"
       "dtype, forward FLOPs and dual-forward activations per token at --seq_len, and the\n"
       "label-word LM head slice; --tensors lists block 0's tensors."});
  return zosched::ExitWith("model_info", zosched::Run());
}
