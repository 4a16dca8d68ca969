#include "runtime/threaded_backend.h"

#include <ctime>

#include "absl/strings/str_format.h"

namespace zosched {

int64_t ThreadCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

namespace {

// Runs `run`, adding the calling thread's CPU time in it to `*cpu_ns`.
template <typename Run>
absl::Status OnThreadCpu(Run run, int64_t* cpu_ns) {
  const int64_t start = ThreadCpuNs();
  absl::Status status = run();
  *cpu_ns += ThreadCpuNs() - start;
  return status;
}

}  // namespace

int64_t ThreadedBackend::Now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              epoch_)
      .count();
}

absl::Status ThreadedBackend::Start(const std::vector<Stream>& streams, int events, int ops,
                                    std::chrono::steady_clock::time_point epoch) {
  stream_specs_ = streams;
  epoch_ = epoch;
  for (Slot& slot : slots_) slot.times.assign(ops, OpTime{});
  streams_ = std::make_unique<HostStreams>(
      streams.size(), events, [this](int stream) { PrepareStreamThread(stream_specs_[stream]); });
  return absl::OkStatus();
}

absl::Status ThreadedBackend::BeginStep(int slot, const StepInputs& inputs) {
  Slot& s = slots_[slot];
  const int64_t tokens = static_cast<int64_t>(batch_size_) * seq_len_;
  auto copy = [](const int32_t* from, int64_t n, std::vector<int32_t>* to) -> const int32_t* {
    if (from == nullptr) return nullptr;
    to->assign(from, from + n);
    return to->data();
  };
  s.inputs = inputs;
  s.inputs.tokens = copy(inputs.tokens, tokens, &s.tokens);
  s.inputs.lengths = copy(inputs.lengths, batch_size_, &s.lengths);
  s.inputs.labels = copy(inputs.labels, batch_size_, &s.labels);
  s.result = StepResult{};
  streams_->Hold();  // the step's ops start together, at Go
  held_ = true;
  return streams_->error();
}

absl::Status ThreadedBackend::EnqueueOp(int slot, int stream, int op_index, const Op& op) {
  Slot* s = &slots_[slot];
  std::function<void()> ready;
  if (op.has_compute()) ready = [this] { ComputeOpReady(); };
  streams_->Enqueue(stream, [this, s, stream, op_index, &op]() -> absl::Status {
    int64_t start = Now();
    int64_t end = -1;  // -1: when the op returns
    int64_t cpu_ns = 0;
    absl::Status status;
    switch (op.kind_case()) {
      case Op::kCopy:
        status = OnThreadCpu([&] { return RunCopy(op); }, &cpu_ns);
        break;
      case Op::kCollective:
        status = OnThreadCpu([&] { return RunCollective(op); }, &cpu_ns);
        break;
      case Op::kCompute: {
        status = TakeComputeTurn();
        if (!status.ok()) break;
        start = Now();  // the op starts when its turn comes
        status = OnThreadCpu([&] { return RunCompute(op, s->inputs, &s->result); }, &cpu_ns);
        end = Now();  // before the next in line may start (and preempt this thread)
        // The next compute op, if it may start, gets in line (not after a
        // failure: the stream skips what follows).
        if (status.ok()) streams_->Finishing(stream);
        GiveComputeTurn();
        break;
      }
      default:
        status = absl::InvalidArgumentError("the op has no kind");
    }
    s->times[op_index] = {start, end < 0 ? Now() : end, cpu_ns};
    if (status.ok()) return status;
    return absl::Status(status.code(),
                        absl::StrFormat("device %d op %d '%s' at step %d: %s", device_, op.id(),
                                        op.name(), s->inputs.step, status.message()));
  }, std::move(ready));
  return absl::OkStatus();
}

absl::Status ThreadedBackend::RecordEvent(int stream, int event) {
  streams_->Record(stream, event);
  return absl::OkStatus();
}

absl::Status ThreadedBackend::WaitEvent(int stream, int event) {
  streams_->Wait(stream, event);
  return absl::OkStatus();
}

absl::Status ThreadedBackend::EndStep(int slot) {
  slots_[slot].fence = streams_->Fence();
  StepHeld();
  return absl::OkStatus();
}

absl::Status ThreadedBackend::Go() {
  if (!held_) return absl::OkStatus();  // started already
  held_ = false;
  if (absl::Status s = BeforeStepStarts(); !s.ok()) return s;
  streams_->Release();
  StepReleased();
  return absl::OkStatus();
}

absl::Status ThreadedBackend::WaitStep(int slot, std::vector<OpTime>* times, StepResult* result) {
  const Slot& s = slots_[slot];
  if (absl::Status status = streams_->WaitFence(s.fence); !status.ok()) return status;
  *times = s.times;
  *result = s.result;
  return absl::OkStatus();
}

}  // namespace zosched
