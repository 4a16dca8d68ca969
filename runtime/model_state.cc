#include "runtime/model_state.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "models/adapters.h"
#include "models/model_spec.h"
#include "runtime/dtype/convert.h"
#include "runtime/model_parts.h"
#include "runtime/nn/thread_team.h"
#include "runtime/zo/normal.h"
#include "runtime/zo_ranges.h"
#include "schedule/param_homes.h"

namespace zosched {
namespace {

// Seeds the initialisation's z streams apart from every step's.
constexpr uint64_t kInitSalt = 0x696e6974ull;  // "init"

}  // namespace

int64_t StoredPart::elements() const { return CountElements(tensors); }

absl::StatusOr<std::vector<StoredPart>> StoredParts(const Schedule& schedule, int device,
                                                    const Backend& backend) {
  const ModelSpec& spec = schedule.model();
  ASSIGN_OR_RETURN(const DeviceParamHomes homes, FindParamHomes(schedule, device));
  std::vector<StoredPart> parts;
  const Peft& peft = schedule.training().peft();
  const bool lora = TrainsAdapters(peft);
  auto add = [&](const std::string& name, Part part, int block,
                 const ParamHome& home) -> absl::Status {
    char* data = backend.HostView(home.buffer);
    if (data == nullptr) {
      return absl::InternalError(absl::StrFormat("device %d: the home of %s, buffer '%s', is not "
                                                 "mapped on this rank",
                                                 device, name, schedule.buffers(home.buffer).name()));
    }
    parts.push_back({name, PartTensors(spec, part, block, peft), PartStream(spec, part, block),
                     data + home.offset_bytes, home.dtype, home.buffer, home.host,
                     /*frozen=*/lora && part != ADAPTER_PART});
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(add("embedding", EMBEDDING_PART, 0, homes.embedding));
  for (int b = 0; b < spec.num_layers(); ++b) {
    RETURN_IF_ERROR(add(absl::StrCat("block ", b), DECODER_BLOCK, b, homes.blocks[b]));
  }
  RETURN_IF_ERROR(add("head", HEAD_PART, 0, homes.head));
  for (int b = 0; b < static_cast<int>(homes.adapters.size()); ++b) {
    RETURN_IF_ERROR(add(absl::StrCat("adapters ", b), ADAPTER_PART, b, homes.adapters[b]));
  }
  return parts;
}

void InitPart(const StoredPart& part, uint64_t seed, float* out) {
  int64_t offset = 0;
  for (const TensorSpec& t : part.tensors) {
    const int64_t n = t.elements();
    const bool norm_weight =
        t.role == TensorRole::kNorm && t.name.size() >= 7 &&
        t.name.compare(t.name.size() - 7, 7, ".weight") == 0;
    if (absl::EndsWith(t.name, ".lora_B.weight")) {
      std::fill(out + offset, out + offset + n, 0.0f);
    } else if (absl::EndsWith(t.name, ".lora_A.weight")) {
      FillNormals(seed ^ kInitSalt, part.stream, offset, n, out + offset);
      const float scale = 1.0f / std::sqrt(3.0f * static_cast<float>(t.shape[1]));
      for (int64_t i = 0; i < n; ++i) out[offset + i] *= scale;
    } else if (t.role == TensorRole::kMatrix || t.role == TensorRole::kEmbedding) {
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

absl::Status FillParts(const std::vector<const StoredPart*>& parts, const PartFill& fill) {
  const int64_t n = static_cast<int64_t>(parts.size());
  std::vector<absl::Status> errors(parts.size());
  // Each thread holds one part in fp32 at a time: as many threads as cores,
  // parts, and parts in an eighth of the machine's memory (OPT-30B's blocks
  // are 2.5 GB each in fp32, beside its 60 GB store).
  int64_t largest = 1;
  for (const StoredPart* part : parts) largest = std::max(largest, part->elements() * 4);
  const int64_t memory = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  const int64_t threads =
      std::min({static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency())), n,
                std::max<int64_t>(1, memory / 8 / largest)});
  std::unique_ptr<ThreadTeam> team;
  if (threads > 1) team = std::make_unique<ThreadTeam>(static_cast<int>(threads));
  ParallelFor(team.get(), n, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) {
      std::vector<float> values(parts[i]->elements());
      errors[i] = fill(*parts[i], values.data());
      if (errors[i].ok()) StorePart(*parts[i], values.data());
    }
  });
  for (const absl::Status& error : errors) {
    if (!error.ok()) return error;
  }
  return absl::OkStatus();
}

absl::Status InitialiseParts(const std::vector<StoredPart>& parts, uint64_t seed) {
  std::vector<const StoredPart*> all;
  for (const StoredPart& part : parts) all.push_back(&part);
  return FillParts(all, [seed](const StoredPart& part, float* values) {
    InitPart(part, seed, values);
    return absl::OkStatus();
  });
}

std::vector<float> CurrentPart(const StoredPart& part, const ModelSpec& spec,
                               const std::vector<ZoState>& pending, float weight_decay) {
  std::vector<float> values(part.elements());
  ConvertBuffer(part.dtype, part.data, FP32, values.data(), values.size());
  if (part.frozen) return values;
  UpdateRange(pending.data(), static_cast<int>(pending.size()), part.stream, DecaySpans(part.tensors), weight_decay, 0, values.size(),
              values.data());
  return values;
}

std::string ParametersChecksum(const std::vector<StoredPart>& parts, const ModelSpec& spec,
                               const std::vector<ZoState>& pending, float weight_decay) {
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
