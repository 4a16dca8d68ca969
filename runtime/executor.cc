#include "runtime/executor.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"

namespace zosched {

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(const Schedule& schedule,
                                                           int device, Backend* backend,
                                                           Clock::time_point epoch) {
  std::unique_ptr<Executor> e(new Executor(schedule, device, backend, epoch));
  absl::flat_hash_map<int64_t, int> local;   // op id -> index in ops_
  absl::flat_hash_map<int64_t, int> device_of;
  for (const Op& op : schedule.ops()) {
    device_of[op.id()] = op.device();
    if (op.device() != device) continue;
    local[op.id()] = e->ops_.size();
    e->ops_.push_back(&op);
  }
  e->waits_for_.resize(e->ops_.size());
  for (const ScheduleDevice& d : schedule.devices()) {
    if (d.id() != device) continue;
    for (const Stream& s : d.streams()) e->streams_.push_back({s, {}});
  }
  for (int i = 0; i < static_cast<int>(e->ops_.size()); ++i) {
    bool found = false;
    for (StreamWork& s : e->streams_) {
      if (s.stream.name() != e->ops_[i]->stream()) continue;
      s.ops.push_back(i);
      found = true;
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "op %d '%s': device %d has no stream '%s'", e->ops_[i]->id(), e->ops_[i]->name(),
          device, e->ops_[i]->stream()));
    }
  }
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
          "edge %d -> %d crosses devices; the CPU runtime connects devices only "
          "through collectives",
          edge.from(), edge.to()));
    }
    e->waits_for_[to->second].push_back(local.at(edge.from()));
  }
  e->events_ = std::make_unique<OpEvents>(e->ops_.size());
  e->times_.resize(e->ops_.size());
  for (int s = 0; s < static_cast<int>(e->streams_.size()); ++s) {
    e->threads_.emplace_back(&Executor::StreamLoop, e.get(), s);
  }
  return e;
}

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (events_ != nullptr) events_->Abort();
  for (std::thread& t : threads_) t.join();
}

int64_t Executor::Now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - epoch_).count();
}

absl::Status Executor::RunOp(int op, const StepInputs& inputs) {
  const Op& o = *ops_[op];
  switch (o.kind_case()) {
    case Op::kCopy:
      return backend_->Copy(o);
    case Op::kCollective:
      return backend_->Collective(o);
    case Op::kCompute:
      return backend_->Compute(o, inputs);
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("op %d '%s' has no kind", o.id(), o.name()));
  }
}

void Executor::StreamLoop(int stream) {
  backend_->PrepareStreamThread(streams_[stream].stream);
  int64_t last = -1;
  for (;;) {
    const StepInputs* inputs;
    int64_t step;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || step_ > last; });
      if (stop_) return;
      step = last = step_;
      inputs = inputs_;
    }
    absl::Status status;
    for (int op : streams_[stream].ops) {
      for (int dep : waits_for_[op]) {
        if (!events_->WaitFor(dep, step)) {
          status = absl::AbortedError("aborted");
          break;
        }
      }
      if (!status.ok()) break;
      const int64_t start = Now();
      status = RunOp(op, *inputs);
      times_[op] = {start, Now()};
      if (!status.ok()) {
        const Op& o = *ops_[op];
        status = absl::Status(status.code(),
                              absl::StrFormat("device %d op %d '%s': %s", device_, o.id(),
                                              o.name(), status.message()));
        events_->Abort();
        break;
      }
      events_->Done(op, step);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Keep the first real error, not the "aborted" of streams it stopped.
      if (!status.ok() && (error_.ok() || absl::IsAborted(error_))) error_ = status;
      ++streams_done_;
    }
    cv_.notify_all();
  }
}

absl::Status Executor::RunStep(const StepInputs& inputs) {
  const int64_t start = Now();
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
    inputs_ = &inputs;
    streams_done_ = 0;
    step_ = inputs.step;
  }
  cv_.notify_all();
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return streams_done_ == static_cast<int>(streams_.size()); });
    if (!error_.ok()) return error_;
  }
  StepInterval step;
  step.set_step(inputs.step);
  step.set_start_ns(start);
  step.set_end_ns(Now());
  steps_.push_back(step);
  for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
    OpInterval interval;
    interval.set_op_id(ops_[i]->id());
    interval.set_device(device_);
    interval.set_stream(ops_[i]->stream());
    interval.set_step(inputs.step);
    interval.set_start_ns(times_[i].first);
    interval.set_end_ns(times_[i].second);
    intervals_.push_back(interval);
  }
  return absl::OkStatus();
}

}  // namespace zosched
