// A schedule's ops in the order the simulator runs them (docs/ARCHITECTURE.md,
// 'Simulator'): each op on its device's stream, after the op before it
// there and after the ops its edges come from. Ops are indices into
// schedule.ops(); streams are global indices, numbered through the
// schedule's devices and each device's streams in order.
//
// Built in three steps, keeping its memory from one schedule to the next:
// Reset, Place for every op in order, then Link.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "schedule/schedule.pb.h"

namespace zosched {

class OpGraph {
 public:
  // Starts on `schedule` (which must outlive the graph's use): its
  // streams, and no op yet.
  void Reset(const Schedule& schedule);
  // Places op `i` (`schedule.ops(i)`; called for i = 0, 1, 2, ... in order)
  // on its stream, after the op placed there before it. Errors:
  // InvalidArgument for a device or stream that does not exist.
  absl::Status Place(int i, const Op& op);
  // Once every op is placed: links each op to its successors. Errors:
  // InvalidArgument for an edge naming an op that does not exist.
  absl::Status Link();

  int size() const { return device_.size(); }
  int device(int op) const { return device_[op]; }
  int stream(int op) const { return stream_[op]; }
  // The op before `op` on its stream, or -1.
  int previous_on_stream(int op) const { return prev_on_stream_[op]; }
  // How many ops `op` waits for: the one before it on its stream and the
  // sources of its edges (one per edge).
  int dependencies(int op) const { return dependencies_[op]; }
  // The ops that wait for `op`: the next op on its stream first, then its
  // edges' targets in schedule order.
  absl::Span<const int> successors(int op) const {
    return absl::MakeConstSpan(successors_.data() + successor_begin_[op],
                               successors_.data() + successor_begin_[op + 1]);
  }
  // Whether op i has id i (lowered schedules; then ids need no lookup).
  bool dense_ids() const { return dense_ids_; }
  // Each global stream's name (the schedule's own string).
  const std::string& stream_name(int stream) const { return *stream_names_[stream]; }

 private:
  // Place's error for `op`, whose device or stream does not exist (apart
  // from Place, whose every call it would slow down).
  ABSL_ATTRIBUTE_NOINLINE absl::Status Unplaceable(const Op& op) const;

  const Schedule* schedule_ = nullptr;
  // Per op.
  std::vector<int> device_, stream_, dependencies_;
  std::vector<int> next_on_stream_, prev_on_stream_;  // op indices, or -1
  bool dense_ids_ = true;
  // Per device: its streams' (name, global index) pairs, a handful each.
  std::vector<std::vector<std::pair<absl::string_view, int>>> streams_;
  std::vector<const std::string*> stream_names_;
  std::vector<int> last_on_stream_;  // per stream: the op placed last, or -1
  // Successors of op i: successors_[successor_begin_[i] .. successor_begin_[i + 1]).
  std::vector<int> successor_begin_, successors_;
  // Link's scratch.
  std::vector<std::pair<int64_t, int64_t>> edges_;  // (from, to): ids, then indices
  std::vector<int> fill_;
};

}  // namespace zosched
