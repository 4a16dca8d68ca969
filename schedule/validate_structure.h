// The structural half of a Schedule's validation (schedule/validate.h runs
// it with the semantic half): references, the happens-before graph, reads
// before writes, races and the memory plan. It judges a schedule as a graph
// of ops over buffers, without the model or the training settings, so the
// simulator's tests can run abstract schedules that pass it.
#pragma once

#include "absl/status/status.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// Returns OK if the ops and buffers of `schedule` form a safe graph.
// Otherwise the first problem found,
// checked in this order, with a message naming the op ids (and op names),
// buffers, devices and streams involved and what would be right:
//
// 1. References (InvalidArgument): device ids are 0..n-1 in order and name an
//    existing Cluster device (each at most once); stream names are unique per
//    device; op ids are unique; every op's device and stream exist; every
//    BufferRange names an existing buffer and lies inside it (offset >= 0,
//    size > 0, offset + size <= buffer size); device buffers name an existing
//    device, host buffers (device -1) an existing Cluster host; every edge
//    names existing ops ("edge 3: 'to' op 99 does not exist").
// 2. Edges across devices (InvalidArgument): allowed only when one end is a
//    DEVICE_TO_DEVICE copy (devices otherwise interact through collectives).
// 3. Collectives (InvalidArgument): all ops sharing a key agree on kind,
//    participants (same devices in the same order) and bytes; each
//    participant has exactly one op with the key and no other device has one;
//    an op's own device is among its participants.
// 4. Cycles (InvalidArgument): the happens-before graph — stream order,
//    edges, and each collective's ops merged into one node (they run
//    together) — has no cycle. A cycle through collectives is how
//    participants that issue collectives in different orders deadlock. The
//    message lists the ops on one cycle.
// 5. Reads before writes (InvalidArgument): every byte an op reads was
//    written, within the step, by ops that happen before it, unless its
//    buffer is `persistent` (state carried across steps).
// 6. Races (InvalidArgument): two ops that are not ordered by happens-before
//    may not touch overlapping bytes of one buffer when at least one of them
//    writes them.
// 7. Memory plan (ResourceExhausted): per device, the sum of its buffers'
//    size_bytes is at most the Cluster device's memory_bytes; per host, the
//    sum of its host buffers at most the host's memory_bytes. The message
//    says by how much the plan is over ("device 0 (gpu0, A100-SXM4-80GB):
//    memory plan needs 349.3 GB, capacity 80.0 GB, over by 269.3 GB") and
//    lists the largest buffers.
absl::Status ValidateScheduleStructure(const Schedule& schedule);

}  // namespace zosched
