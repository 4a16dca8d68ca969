#include "schedule/memory_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "models/accounting.h"
#include "models/model_spec.h"
#include "schedule/compute_op_model.h"

namespace zosched {

std::vector<DeviceBuffers> PlanMemory(const ModelSpec& model, const ResolvedLowerOptions& resolved,
                                      const std::vector<DevicePlan>& plans,
                                      ScheduleBuilder* builder) {
  const LowerOptions& options = resolved.options;
  const TrainingSettings& t = options.training;
  const DType compute = t.compute_dtype();
  const int64_t cb = DTypeBytes(compute);
  const int64_t wb = DTypeBytes(t.wire_dtype());
  const ModelCounts counts = CountModel(model, t.peft());
  const int64_t block = counts.block_params;
  const int64_t embedding = PartElements(counts, EMBEDDING_PART);
  const int64_t head = PartElements(counts, HEAD_PART);
  const int layers = model.num_layers();
  const bool offloaded = options.strategy != MEZO;
  const bool casts = t.wire_dtype() != compute;
  // The naive scheme gives each device its own store to offload into; a
  // frozen base (LoRA) is never written, so its devices share one.
  const bool shared_store =
      !(options.strategy == DISTZO2 && !options.slicing) || counts.adapter_params > 0;
  int64_t total_losses = 0;
  for (const DevicePlan& plan : plans) total_losses += plan.examples * plan.paths.size();
  int64_t perturbed_bytes = 0, workspace_bytes = 0;
  for (ComputeKind kind : {EMBED, BLOCK_FORWARD, HEAD_LOSS}) {
    perturbed_bytes = std::max(perturbed_bytes, PerturbedBytes(model, counts, t, kind));
    workspace_bytes = std::max(workspace_bytes, WorkspaceBytes(model, t, kind));
  }

  // Adds a buffer holding every decoder block, block b at b·E elements.
  auto add_blocks = [&](const std::string& name, BufferKind kind, int device,
                        const std::string& host, DType dtype) {
    const int64_t bytes = DTypeBytes(dtype);
    Buffer* b = builder->AddBuffer(name, kind, device, host, layers * block * bytes, dtype, true);
    for (int k = 0; k < layers; ++k) {
      *b->add_params() = Placement(DECODER_BLOCK, k, block, k * block * bytes);
    }
    return name;
  };

  std::vector<DeviceBuffers> buffers(plans.size());
  std::map<std::string, std::string> host_stores;  // host -> its shared store
  for (const DevicePlan& plan : plans) {
    DeviceBuffers& mine = buffers[plan.id];
    const std::string d = absl::StrCat("d", plan.id, "/");
    mine.resident = d + "resident";
    Buffer* resident = builder->AddBuffer(mine.resident, RESIDENT_PARAMS, plan.id, "",
                                          (embedding + head) * cb, compute, true);
    *resident->add_params() = Placement(EMBEDDING_PART, 0, embedding, 0);
    *resident->add_params() = Placement(HEAD_PART, 0, head, embedding * cb);
    if (counts.adapter_params > 0) {
      mine.adapters = d + "adapters";
      Buffer* adapters = builder->AddBuffer(mine.adapters, RESIDENT_PARAMS, plan.id, "",
                                            layers * counts.adapter_params * cb, compute, true);
      for (int k = 0; k < layers; ++k) {
        *adapters->add_params() =
            Placement(ADAPTER_PART, k, counts.adapter_params, k * counts.adapter_params * cb);
      }
    }
    if (!offloaded) {
      mine.blocks = add_blocks(d + "blocks", RESIDENT_PARAMS, plan.id, "", compute);
    } else {
      const int64_t padded = plan.slice_chunk * plan.group.size();
      for (int k = 0; k < options.block_slots; ++k) {
        mine.slots.push_back(absl::StrCat(d, "slot", k));
        builder->AddBuffer(mine.slots.back(), BLOCK_SLOT, plan.id, "", padded * cb, compute,
                           false);
        if (casts) {
          mine.wire.push_back(absl::StrCat(d, "wire", k));
          builder->AddBuffer(mine.wire.back(), WIRE_STAGING, plan.id, "", padded * wb,
                             t.wire_dtype(), false);
        }
      }
      const std::string& host = plan.device->host();
      if (shared_store) {
        auto [it, inserted] = host_stores.emplace(host, host + "/params");
        if (inserted) add_blocks(it->second, HOST_PARAMS, -1, host, t.host_dtype());
        mine.host_params = it->second;
      } else {
        mine.host_params = add_blocks(absl::StrCat(host, "/params.d", plan.id), HOST_PARAMS, -1,
                                      host, t.host_dtype());
      }
    }
    for (const PerturbationPath& path : plan.paths) {
      mine.activations.push_back(absl::StrCat(d, "act", path.direction > 0 ? absl::StrCat(path.direction) : "",
                                              path.sign == PLUS ? "+" : "-"));
      builder->AddBuffer(mine.activations.back(), ACTIVATIONS, plan.id, "",
                         plan.micro_batches(t.micro_batch_size()) *
                             MicroBatchActivationBytes(model, t),
                         compute, false);
    }
    mine.workspace = d + "workspace";
    builder->AddBuffer(mine.workspace, WORKSPACE, plan.id, "", workspace_bytes, compute,
                       false);
    mine.perturbed = d + "perturbed";
    builder->AddBuffer(mine.perturbed, PERTURBED_WEIGHTS, plan.id, "", perturbed_bytes, compute,
                       false);
    mine.losses = d + "losses";
    builder->AddBuffer(mine.losses, LOSSES, plan.id, "", total_losses * kLossBytes, FP32, false);
    mine.zo_state = d + "zo_state";
    builder->AddBuffer(mine.zo_state, ZO_STATE, plan.id, "", ZoStateBytes(t), FP32, true);
  }
  return buffers;
}

}  // namespace zosched
