// The memory plan of a lowered schedule: every buffer of every device and
// host, with its kind, size, dtype, persistence and the parameters it holds
// (docs/ARCHITECTURE.md, 'The schedule IR', Buffers). Sizes come from
// models/accounting.h and schedule/compute_op_model.h.
//
// Per device:
//   resident    RESIDENT_PARAMS: the embedding part, then the head part
//   adapters    RESIDENT_PARAMS (LoRA): every block's ADAPTER_PART, in order
//   blocks      RESIDENT_PARAMS (MEZO): every decoder block, in order
//   slot<k>     BLOCK_SLOT (ZO2, DISTZO2): the ring's slots, each one block
//               wide (padded to slice_chunk · group size elements)
//   wire<k>     WIRE_STAGING: each slot at the wire dtype, when it differs
//               from the compute dtype
//   act+, act-  ACTIVATIONS: the residual stream of its examples per path
//               (act<i>+, act<i>- along direction i >= 1)
//   workspace   WORKSPACE: one micro-batch's scratch
//   perturbed   PERTURBED_WEIGHTS: the largest θ±εz a forward reads
//   losses      LOSSES: every (example, sign) loss of the step
//   zo_state    ZO_STATE: the pending update
// Per host (ZO2, DISTZO2): one HOST_PARAMS store of every block in the host
// dtype, shared by the host's devices; the naive DISTZO2 scheme gives every
// device its own, except under LoRA (nothing is offloaded into it).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/model.pb.h"
#include "schedule/device_plan.h"
#include "schedule/lower_options.h"
#include "schedule/schedule_builder.h"

namespace zosched {

// The names of one device's buffers ("" where the strategy has none).
struct DeviceBuffers {
  std::string resident, blocks, adapters, workspace, perturbed, losses, zo_state;
  std::string host_params;  // the host store this device streams from
  std::vector<std::string> activations;  // per path of the device's plan, in order
  std::vector<std::string> slots, wire;
};

// Adds the buffers of `plans` (PlanDevices) to the schedule; returns each
// device's, indexed by device id.
std::vector<DeviceBuffers> PlanMemory(const ModelSpec& model, const ResolvedLowerOptions& resolved,
                                      const std::vector<DevicePlan>& plans,
                                      ScheduleBuilder* builder);

}  // namespace zosched
