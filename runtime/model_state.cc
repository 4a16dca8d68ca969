#include "runtime/model_state.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "runtime/dtype/convert.h"
#include "runtime/zo/normal.h"
#include "runtime/zo/zo_math.h"

namespace zosched {
namespace {

// Seeds the initialisation's z streams apart from every step's.
constexpr uint64_t kInitSalt = 0x696e6974ull;  // "init"

}  // namespace

int64_t StoredPart::elements() const { return CountElements(tensors); }

absl::StatusOr<std::vector<StoredPart>> StoredParts(const Schedule& schedule, int device,
                                                    const CpuBackend& backend) {
  const ModelSpec& spec = schedule.model();
  const int layers = spec.num_layers();
  const DType compute = schedule.training().compute_dtype();
  const std::string prefix = absl::StrCat("d", device, "/");
  char* resident = backend.Buffer(prefix + "resident");
  if (resident == nullptr) {
    return absl::InternalError(absl::StrFormat("buffer '%sresident' is not mapped", prefix));
  }
  std::vector<StoredPart> parts;
  StoredPart embedding{"embedding", EmbeddingTensors(spec), EmbeddingStream(layers), resident,
                       compute, prefix + "resident", false};
  parts.push_back(embedding);
  char* resident_blocks = backend.Buffer(prefix + "blocks");
  std::string store;  // the host store this device streams from
  for (const Op& op : schedule.ops()) {
    if (op.device() == device && op.has_copy() && op.copy().direction() == HOST_TO_DEVICE) {
      store = op.copy().src().buffer();
      break;
    }
  }
  const int64_t block_elements = BlockParams(spec);
  for (int b = 0; b < layers; ++b) {
    StoredPart block{absl::StrCat("block ", b), BlockTensors(spec, b), BlockStream(b)};
    if (resident_blocks != nullptr) {
      block.data = resident_blocks + b * block_elements * DTypeBytes(compute);
      block.dtype = compute;
      block.buffer = prefix + "blocks";
    } else {
      const Buffer* buffer = backend.BufferSpec(store);
      if (buffer == nullptr || backend.Buffer(store) == nullptr) {
        return absl::InternalError(absl::StrFormat(
            "device %d: no resident blocks and no host store mapped ('%s')", device, store));
      }
      block.dtype = buffer->dtype();
      block.data = backend.Buffer(store) + b * block_elements * DTypeBytes(block.dtype);
      block.buffer = store;
      block.host = true;
    }
    parts.push_back(block);
  }
  std::vector<TensorSpec> head = FinalNormTensors(spec);
  for (TensorSpec& t : HeadTensors(spec)) head.push_back(std::move(t));
  parts.push_back({"head", head, HeadStream(layers),
                   resident + EmbeddingParams(spec) * DTypeBytes(compute), compute,
                   prefix + "resident", false});
  return parts;
}

void InitPart(const StoredPart& part, uint64_t seed, float* out) {
  int64_t offset = 0;
  for (const TensorSpec& t : part.tensors) {
    const int64_t n = t.elements();
    const bool norm_weight =
        t.role == TensorRole::kNorm && t.name.size() >= 7 &&
        t.name.compare(t.name.size() - 7, 7, ".weight") == 0;
    if (t.role == TensorRole::kMatrix || t.role == TensorRole::kEmbedding) {
      FillNormals(seed ^ kInitSalt, part.stream, offset, n, out + offset);
      for (int64_t i = 0; i < n; ++i) out[offset + i] *= 0.02f;
    } else {
      std::fill(out + offset, out + offset + n, norm_weight ? 1.0f : 0.0f);
    }
    offset += n;
  }
}

void StorePart(const StoredPart& part, const float* values) {
  ConvertBuffer(FP32, values, part.dtype, part.data, part.elements());
}

std::vector<float> CurrentPart(const StoredPart& part, const ModelSpec& spec,
                               const ZoState& pending, float weight_decay) {
  std::vector<float> values(part.elements());
  ConvertBuffer(part.dtype, part.data, FP32, values.data(), values.size());
  if (pending.learning_rate == 0) return values;
  std::vector<float> z(values.size());
  FillNormals(pending.seed, part.stream, 0, z.size(), z.data());
  int64_t offset = 0;
  for (const TensorSpec& t : part.tensors) {
    for (int64_t i = offset; i < offset + t.elements(); ++i) {
      values[i] = Updated(values[i], z[i], pending.learning_rate, pending.g, weight_decay,
                          t.weight_decay());
    }
    offset += t.elements();
  }
  return values;
}

std::string ParametersChecksum(const std::vector<StoredPart>& parts, const ModelSpec& spec,
                               const ZoState& pending, float weight_decay) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const StoredPart& part : parts) {
    const std::vector<float> values = CurrentPart(part, spec, pending, weight_decay);
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(values.data());
    for (size_t i = 0; i < values.size() * sizeof(float); ++i) {
      hash = (hash ^ bytes[i]) * 0x100000001b3ull;
    }
  }
  return absl::StrFormat("%016x", hash);
}

}  // namespace zosched
