#include "runtime/executor.h"

#include <algorithm>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"

namespace zosched {

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(const Schedule& schedule,
                                                           int device, Backend* backend,
                                                           Clock::time_point epoch) {
  std::unique_ptr<Executor> e(new Executor(device, backend));
  absl::flat_hash_map<int64_t, int> local;   // op id -> index in ops_
  absl::flat_hash_map<int64_t, int> device_of;
  for (const Op& op : schedule.ops()) {
    device_of[op.id()] = op.device();
    if (op.device() != device) continue;
    local[op.id()] = e->ops_.size();
    e->ops_.push_back(&op);
  }
  std::vector<Stream> streams;
  for (const ScheduleDevice& d : schedule.devices()) {
    if (d.id() == device) streams.assign(d.streams().begin(), d.streams().end());
  }
  e->streams_ = streams.size();
  const int n = e->ops_.size();
  for (const Op* op : e->ops_) {
    auto it = std::find_if(streams.begin(), streams.end(),
                           [&](const Stream& s) { return s.name() == op->stream(); });
    if (it == streams.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "op %d '%s': device %d has no stream '%s'", op->id(), op->name(), device, op->stream()));
    }
    e->stream_of_.push_back(it - streams.begin());
  }

  // Dependencies: stream order and the edges (local indices).
  std::vector<std::vector<int>> after(n);  // op -> ops that wait for it
  std::vector<int> pending(n, 0);
  std::vector<int> last_on_stream(e->streams_, -1);
  for (int i = 0; i < n; ++i) {
    int& last = last_on_stream[e->stream_of_[i]];
    if (last >= 0) {
      after[last].push_back(i);
      ++pending[i];
    }
    last = i;
  }
  std::vector<std::vector<int>> edge_from(n);  // op -> cross-stream producers
  for (const Edge& edge : schedule.edges()) {
    auto to = local.find(edge.to());
    auto from_device = device_of.find(edge.from());
    if (from_device == device_of.end() || !device_of.count(edge.to())) {
      return absl::InvalidArgumentError(
          absl::StrFormat("edge %d -> %d names an op that does not exist", edge.from(), edge.to()));
    }
    const bool from_here = from_device->second == device;
    if (to == local.end() && !from_here) continue;
    if (to == local.end() || !from_here) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "edge %d -> %d crosses devices; the runtime connects devices only through "
          "collectives",
          edge.from(), edge.to()));
    }
    const int from = local.at(edge.from());
    after[from].push_back(to->second);
    ++pending[to->second];
    if (e->stream_of_[from] != e->stream_of_[to->second]) edge_from[to->second].push_back(from);
  }

  // Enqueue order: Kahn's algorithm, smallest schedule index first.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    e->order_.push_back(i);
    for (int next : after[i]) {
      if (--pending[next] == 0) ready.push(next);
    }
  }
  if (static_cast<int>(e->order_.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrFormat("device %d's ops and edges form a cycle", device));
  }

  // Events: one per op another stream waits for, then one per stream for
  // the step boundary.
  e->records_.assign(n, -1);
  e->waits_for_.resize(n);
  int events = 0;
  for (int i = 0; i < n; ++i) {
    for (int from : edge_from[i]) {
      if (e->records_[from] < 0) e->records_[from] = events++;
      e->waits_for_[i].push_back(e->records_[from]);
    }
  }
  e->step_end_event_ = events;
  events += e->streams_;
  e->times_.resize(n);
  if (absl::Status status = backend->Start(streams, events, n, epoch); !status.ok()) {
    return status;
  }
  return e;
}

absl::Status Executor::EnqueueStep(const StepInputs& inputs) {
  if (!error_.ok()) return error_;
  if (static_cast<int>(in_flight_.size()) == kStepSlots) {
    if (absl::Status s = Start(); !s.ok()) return s;
    const InFlight oldest = in_flight_.front();
    in_flight_.pop_front();
    StepOutcome outcome;
    if (absl::Status status = Finish(oldest, &outcome); !status.ok()) return status;
    finished_early_.push_back(outcome);
  }
  const int slot = next_slot_;
  next_slot_ = (next_slot_ + 1) % kStepSlots;
  auto fail = [&](absl::Status status) {
    error_ = status;
    return status;
  };
  if (absl::Status s = backend_->BeginStep(slot, inputs); !s.ok()) return fail(s);
  // The step boundary: each stream waits for every other stream's end of
  // the previous step (a no-op before the first).
  for (int s = 0; s < streams_; ++s) {
    for (int other = 0; other < streams_; ++other) {
      if (other == s) continue;
      if (absl::Status st = backend_->WaitEvent(s, step_end_event_ + other); !st.ok()) {
        return fail(st);
      }
    }
  }
  for (int i : order_) {
    const int stream = stream_of_[i];
    for (int event : waits_for_[i]) {
      if (absl::Status s = backend_->WaitEvent(stream, event); !s.ok()) return fail(s);
    }
    if (absl::Status s = backend_->EnqueueOp(slot, stream, i, *ops_[i]); !s.ok()) return fail(s);
    if (records_[i] >= 0) {
      if (absl::Status s = backend_->RecordEvent(stream, records_[i]); !s.ok()) return fail(s);
    }
  }
  for (int s = 0; s < streams_; ++s) {
    if (absl::Status st = backend_->RecordEvent(s, step_end_event_ + s); !st.ok()) return fail(st);
  }
  if (absl::Status s = backend_->EndStep(slot); !s.ok()) return fail(s);
  in_flight_.push_back({inputs.step, slot});
  return absl::OkStatus();
}

absl::Status Executor::Finish(const InFlight& step, StepOutcome* outcome) {
  StepResult result;
  if (absl::Status s = backend_->WaitStep(step.slot, &times_, &result); !s.ok()) {
    error_ = s;
    return s;
  }
  int64_t start = INT64_MAX, end = INT64_MIN;
  for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
    OpInterval interval;
    interval.set_op_id(ops_[i]->id());
    interval.set_device(device_);
    interval.set_stream(ops_[i]->stream());
    interval.set_step(step.step);
    interval.set_start_ns(times_[i].start_ns);
    interval.set_end_ns(times_[i].end_ns);
    interval.set_cpu_ns(times_[i].cpu_ns);
    intervals_.push_back(interval);
    start = std::min(start, times_[i].start_ns);
    end = std::max(end, times_[i].end_ns);
  }
  StepInterval interval;
  interval.set_step(step.step);
  interval.set_start_ns(ops_.empty() ? 0 : start);
  interval.set_end_ns(ops_.empty() ? 0 : end);
  steps_.push_back(interval);
  outcome->step = step.step;
  outcome->result = result;
  return absl::OkStatus();
}

absl::Status Executor::Start() {
  if (!error_.ok()) return error_;
  if (absl::Status s = backend_->Go(); !s.ok()) {
    error_ = s;
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<Executor::StepOutcome> Executor::FinishStep() {
  if (!finished_early_.empty()) {
    StepOutcome outcome = finished_early_.front();
    finished_early_.pop_front();
    return outcome;
  }
  if (!error_.ok()) return error_;
  if (in_flight_.empty()) return absl::FailedPreconditionError("no step is in flight");
  if (absl::Status s = Start(); !s.ok()) return s;
  const InFlight oldest = in_flight_.front();
  in_flight_.pop_front();
  StepOutcome outcome;
  if (absl::Status s = Finish(oldest, &outcome); !s.ok()) return s;
  return outcome;
}

absl::StatusOr<Executor::StepOutcome> Executor::RunStep(const StepInputs& inputs) {
  if (absl::Status s = EnqueueStep(inputs); !s.ok()) return s;
  return FinishStep();
}

}  // namespace zosched
