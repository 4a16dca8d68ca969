// The grid and slicing plan of a lowered strategy: which perturbation paths
// each device runs, on which examples, and which slice of every decoder
// block it uploads, updates and offloads (docs/ARCHITECTURE.md, 'The
// algorithms', DistZO2).
#pragma once

#include <cstdint>
#include <vector>

#include "schedule/cluster.pb.h"
#include "schedule/lower_options.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// One perturbation path of a step: the forward pass along `direction` (of
// the step's q) with θ + εz (PLUS) or θ - εz (MINUS).
struct PerturbationPath {
  int direction = 0;
  Sign sign = PLUS;
};

struct DevicePlan {
  int id = 0;                        // schedule device id = rank = p·D + d
  const Device* device = nullptr;    // its cluster device
  std::vector<PerturbationPath> paths;  // the perturbation paths it runs, in order
  int first_example = 0;             // its data-parallel share of the batch
  int examples = 0;
  // Slicing group: the devices that share this device's host (sliced
  // DISTZO2), or just this device; `rank` is its position in the group.
  std::vector<int> group;
  int rank = 0;
  // Its slice of every block: elements [slice_first, slice_first +
  // slice_count). Every member's chunk is slice_chunk = ⌈E / group size⌉
  // elements wide in a slot (the last one padded), E = BlockParams.
  int64_t slice_chunk = 0;
  int64_t slice_first = 0;
  int64_t slice_count = 0;

  int micro_batches(int micro_batch_size) const { return examples / micro_batch_size; }
};

// The devices of `resolved` (ResolveLowerOptions), in rank order. A step's
// 2q paths, in order (direction 0 +, direction 0 -, direction 1 +, ...),
// are split into P runs of 2q/P: perturbation group p runs the p-th (so
// with q = 1, P = 1 runs both signs on every device, P = 2 the +ε pass on
// p = 0 and the -ε pass on p = 1); data-parallel group d takes examples
// [d·B/D, (d+1)·B/D).
// `block_elements`: E, the parameters of one decoder block.
std::vector<DevicePlan> PlanDevices(const ResolvedLowerOptions& resolved, int64_t block_elements);

}  // namespace zosched
