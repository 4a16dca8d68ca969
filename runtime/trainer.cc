#include "runtime/trainer.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/directory_lock.h"
#include "base/files.h"
#include "base/output_dir.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "models/model_zoo.h"
#include "runtime/backend_factory.h"
#include "runtime/checkpoint/run_checkpoint.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/collective_groups.h"
#include "runtime/evaluate.h"
#include "runtime/executor.h"
#include "runtime/heartbeats.h"
#include "runtime/host_memory_check.h"
#include "runtime/host_store_layout.h"
#include "runtime/model_state.h"
#include "runtime/mpi_world.h"
#include "runtime/stop_signals.h"
#include "runtime/task.h"
#include "runtime/task_fingerprint.h"
#include "runtime/watchdog.h"
#include "runtime/zo/trajectory_check.h"
#include "runtime/zo/trajectory_log.h"
#include "runtime/zo/zo_math.h"
#include "schedule/chrome_trace.h"
#include "schedule/cluster_catalog.h"
#include "schedule/cluster_lookup.h"
#include "schedule/first_order_model.h"
#include "schedule/lowering.h"
#include "schedule/param_homes.h"
#include "schedule/validate.h"
#include "sim/simulator.h"

namespace zosched {
namespace {

void ApplyLinkOverrides(const TrainOptions& o, Cluster* cluster) {
  for (Device& d : *cluster->mutable_devices()) {
    if (o.h2d_gbps > 0) d.mutable_host_link()->set_down_gbps(o.h2d_gbps);
    if (o.d2h_gbps > 0) d.mutable_host_link()->set_up_gbps(o.d2h_gbps);
  }
  if (o.peer_gbps > 0) {
    for (PeerDomain& p : *cluster->mutable_peer_domains()) p.set_gbps_per_device(o.peer_gbps);
  }
}

absl::Status Mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrFormat("%s failed (MPI error %d)", what, code));
}

// The lowest device whose parameters live in host buffer `buffer` (an
// index into Schedule.buffers) initialises it.
absl::StatusOr<int> HostBufferOwner(const Schedule& schedule, int buffer) {
  for (int d = 0; d < schedule.devices_size(); ++d) {
    ASSIGN_OR_RETURN(const DeviceParamHomes homes, FindParamHomes(schedule, d));
    for (const ParamHome& home : homes.blocks) {
      if (home.buffer == buffer) return d;
    }
  }
  return absl::InternalError(absl::StrFormat("no device's parameters live in buffer '%s'",
                                             schedule.buffers(buffer).name()));
}

// Checks that the ranks of a node are exactly the devices of one schedule
// host, so that the node's shared memory is that host's parameter store.
absl::Status CheckNodeHosts(const Schedule& schedule, const NodeSharedMemory& memory,
                            const std::string& host) {
  char mine[64] = {};
  std::snprintf(mine, sizeof(mine), "%s", host.c_str());
  int size = 0;
  MPI_Comm_size(memory.node(), &size);
  std::vector<char> all(64 * size);
  RETURN_IF_ERROR(Mpi(MPI_Allgather(mine, 64, MPI_CHAR, all.data(), 64, MPI_CHAR, memory.node()),
                      "MPI_Allgather of host names"));
  for (int r = 0; r < size; ++r) {
    if (host != std::string(all.data() + 64 * r)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "ranks on one node must share one schedule host: this rank's device is on '%s', "
          "another rank of the node is on '%s'",
          host, std::string(all.data() + 64 * r)));
    }
  }
  int on_host = 0;
  for (const ScheduleDevice& d : schedule.devices()) {
    const Device* device = FindDevice(schedule.cluster(), d.cluster_device());
    on_host += device != nullptr && device->host() == host;
  }
  if (on_host != size) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the schedule puts %d devices on host '%s' but %d ranks share this node: start the "
        "ranks of one schedule host on one node (their parameter store is that node's shared "
        "memory)",
        on_host, host, size));
  }
  return absl::OkStatus();
}

// Merges every rank's intervals into rank 0's Timeline.
absl::StatusOr<Timeline> GatherTimeline(const Schedule& schedule, const Executor& executor,
                                        const std::vector<SpeedProbeSample>& probes, int rank,
                                        int world) {
  Timeline mine;
  for (const OpInterval& i : executor.intervals()) *mine.add_ops() = i;
  for (const SpeedProbeSample& p : probes) *mine.add_speed_probes() = p;
  for (const StepInterval& s : executor.steps()) *mine.add_steps() = s;
  std::string bytes;
  mine.SerializeToString(&bytes);
  int size = bytes.size();
  std::vector<int> sizes(world), offsets(world);
  RETURN_IF_ERROR(Mpi(MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
                      "MPI_Gather of timeline sizes"));
  int total = 0;
  for (int r = 0; r < world; ++r) {
    offsets[r] = total;
    total += sizes[r];
  }
  std::string all(rank == 0 ? total : 0, '\0');
  RETURN_IF_ERROR(Mpi(MPI_Gatherv(bytes.data(), size, MPI_CHAR, all.data(), sizes.data(),
                                  offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
                      "MPI_Gatherv of timelines"));
  Timeline merged;
  if (rank != 0) return merged;
  merged.set_source(MEASURED);
  merged.set_producer(absl::StrFormat("zosched runtime (cpu, %d ranks)", world));
  merged.set_schedule_name(schedule.name());
  merged.set_cluster_name(schedule.cluster().name());
  std::map<int32_t, StepInterval> steps;
  for (int r = 0; r < world; ++r) {
    Timeline t;
    t.ParseFromArray(all.data() + offsets[r], sizes[r]);
    for (const OpInterval& i : t.ops()) *merged.add_ops() = i;
    for (const SpeedProbeSample& p : t.speed_probes()) *merged.add_speed_probes() = p;
    for (const StepInterval& s : t.steps()) {
      auto [it, inserted] = steps.emplace(s.step(), s);
      it->second.set_start_ns(std::min(it->second.start_ns(), s.start_ns()));
      it->second.set_end_ns(std::max(it->second.end_ns(), s.end_ns()));
    }
  }
  for (const auto& [step, s] : steps) *merged.add_steps() = s;
  return merged;
}

// The least any start-up wait may last (see Run::Setup).
constexpr std::chrono::seconds kStartupLimit(120);

// Drops a last line of the trajectory log at `path` that a kill cut short
// (no '\n'): its step runs again on resume.
absl::Status DropTornLastLine(const std::string& path) {
  std::string text;
  RETURN_IF_ERROR(ReadFileToString(path, &text));
  if (text.empty() || text.back() == '\n') return absl::OkStatus();
  const size_t keep = text.rfind('\n') + 1;  // 0 when no line is whole
  std::printf("%s: dropping a last line cut short (\"%s\"); its step runs again\n",
              path.c_str(), text.substr(keep).c_str());
  if (truncate(path.c_str(), keep) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot truncate ", path));
  }
  return absl::OkStatus();
}

// The entries of the run's trajectory log at `path` that --resume replays,
// a last line cut short left out (the resume drops it from the file too),
// each checked to be this run's (runtime/zo/trajectory_check.h).
absl::StatusOr<std::vector<TrajectoryEntry>> ReadRunLog(const std::string& path,
                                                        const Schedule& schedule) {
  std::string text;
  if (absl::Status read = ReadFileToString(path, &text); !read.ok()) {
    if (!absl::IsNotFound(read)) return read;
    return absl::NotFoundError(absl::StrFormat(
        "there is no run to resume: %s is missing; start a fresh run (without --resume)", path));
  }
  if (!text.empty() && text.back() != '\n') text.resize(text.rfind('\n') + 1);
  const TrainingSettings& t = schedule.training();
  ASSIGN_OR_RETURN(std::vector<TrajectoryEntry> entries,
                   ParseTrajectory(text, path, t.base_seed()));
  RETURN_IF_ERROR(CheckTrajectoryIsThisRuns(entries, t.base_seed(), t.learning_rate(), path));
  return entries;
}

// OK when a run in `out` that has trained `done` steps has steps left
// before `steps`. Errors: FailedPrecondition saying how to ask for more.
absl::Status CheckStepsLeft(const std::string& out, int64_t done, int steps) {
  if (done < steps) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "the run in %s already has %d steps (0..%d), as many as --steps=%d asks for: give "
      "--steps=N with N > %d to train it further",
      out, done, done - 1, steps, done));
}

// The outputs of a run, removed before a fresh run with --overwrite (so
// none of another run is left beside the new one's).
constexpr const char* kRunOutputs[] = {
    "checkpoint.safetensors", "checkpoint.safetensors.tmp", "weights.safetensors",
    "weights.safetensors.tmp", "trajectory.log", "train.csv", "schedule.pb",
    "timeline.pb", "trace.json"};

// Writes a line to a terminal as a progress bar, else as a plain line.
void Progress(int step, int steps, double loss, double tokens_per_s, double eta_s) {
  const bool tty = isatty(fileno(stdout));
  const int width = 24, filled = width * (step + 1) / steps;
  std::printf("%sstep %d/%d [%s%s] loss %.4f  %.0f tokens/s  ETA %dm%02ds%s",
              tty ? "\r" : "", step + 1, steps, std::string(filled, '#').c_str(),
              std::string(width - filled, '.').c_str(), loss, tokens_per_s,
              static_cast<int>(eta_s) / 60, static_cast<int>(eta_s) % 60, tty ? "" : "\n");
  std::fflush(stdout);
}

class Run {
 public:
  Run(const TrainOptions& o, int rank, int world) : o_(o), rank_(rank), world_(world) {}
  absl::StatusOr<TrainEnd> Go();
  std::chrono::seconds timeout() const { return timeout_; }
  // The ranks of this node that have stalled or died (Heartbeats), for
  // errors; "" when none or before set-up.
  std::string SilentRanks() const {
    return heartbeats_ == nullptr ? "" : heartbeats_->SilentRanks(std::chrono::seconds(2));
  }

 private:
  absl::Status Setup();
  absl::Status InitParameters();
  absl::Status Resume();
  // Whether this rank writes `part`: a shared host part only its owner
  // (the lowest device streaming from it), a resident part always.
  absl::StatusOr<bool> WritesPart(const StoredPart& part) const {
    if (!part.host) return true;
    ASSIGN_OR_RETURN(const int owner, HostBufferOwner(schedule_, part.buffer));
    return owner == rank_;
  }
  // Applies `pending` to this rank's parts as a step's fused update does
  // (storage dtype -> fp32, update, back), host parts by their owner only.
  absl::Status ApplyOnHost(const ZoState& pending);
  // Every rank: the run's checkpoint after the steps logged so far
  // (`when` names it in errors). Rank 0 writes it; the others wait.
  absl::Status WriteCheckpoint(const std::string& when);
  absl::Status Evaluate(const std::string& label, const ZoState& pending);
  absl::Status Finish();
  // The pending update as the host sees it: ZO_STATE's host view (pull it
  // from the device first; push it after writing it).
  ZoState* PendingView() const;
  // Logs a finished step (rank 0): trajectory, train.csv, progress.
  absl::Status LogStep(const Executor::StepOutcome& outcome);
  // Every rank meets, without spinning, and gets the largest vote. Once the
  // node-shared memory exists and holds every rank, through it
  // (runtime/node_meeting.h: waiting ranks sleep until the last arrives);
  // otherwise over MPI (runtime/mpi_world.h: MeetAll), whose 20 µs polls
  // keep the ranks' step starts within a few tens of µs of each other.
  // `behind_rank0`: the others may be waiting for rank 0's evaluation or
  // checkpoint (10 times the limit).
  absl::StatusOr<int> Meet(const std::string& what, int vote = 0, bool behind_rank0 = false) {
    const auto limit = behind_rank0 ? 10 * timeout_ : timeout_;
    if (host_memory_ != nullptr && host_memory_->world_meeting() != nullptr) {
      return host_memory_->world_meeting()->Meet(what, vote, limit);
    }
    return MeetAll(what, vote, limit, std::chrono::microseconds(20));
  }
  absl::Status Barrier(const std::string& what, bool behind_rank0 = false) {
    return Meet(what, 0, behind_rank0).status();
  }
  std::string CheckpointPath() const { return out_ + "/checkpoint.safetensors"; }

  const TrainOptions& o_;
  const int rank_, world_;
  std::string out_;
  Schedule schedule_;
  TrainingTask task_;
  RunData data_;  // what the task is, for the checkpoints
  std::unique_ptr<NodeSharedMemory> host_memory_;
  std::unique_ptr<MpiCollectives> collectives_;
  std::unique_ptr<Backend> backend_;
  int zo_state_buffer_ = -1;
  std::unique_ptr<TrajectoryWriter> trajectory_;
  std::ofstream csv_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_progress_{};  // rank 0's last progress line
  std::vector<StoredPart> parts_;
  std::unique_ptr<Executor> executor_;
  std::vector<SpeedProbeSample> probes_;  // with o_.speed_probe_every
  int start_step_ = 0;
  std::chrono::seconds timeout_{0};
  std::unique_ptr<Heartbeats> heartbeats_;
  // Rank 0: every entry of trajectory.log (what a checkpoint covers).
  std::vector<TrajectoryEntry> logged_;
  std::optional<DirectoryLock> out_dir_lock_;  // with o_.lock_out_dir, rank 0
};

absl::Status Run::Setup() {
  out_ = OutputDir(o_.out_dir, "train");
  ASSIGN_OR_RETURN(schedule_, PrepareSchedule(o_));
  if (o_.collective_timeout_s > 0) {
    timeout_ = std::chrono::seconds(o_.collective_timeout_s);
  } else {
    ASSIGN_OR_RETURN(timeout_, AutoWaitTimeout(schedule_));
  }
  // Before anything is written: a fresh run does not overwrite another,
  // nor does it write beside one that runs (train's launcher, or a run of
  // one rank, has checked and locked it already).
  if (rank_ == 0) {
    RETURN_IF_ERROR(MakeDirectories(out_));
    if (o_.lock_out_dir) {
      ASSIGN_OR_RETURN(out_dir_lock_, DirectoryLock::Acquire(out_, "--out_dir"));
      RETURN_IF_ERROR(CheckOutputDirectory(o_));
    }
    if (!o_.resume) {
      for (const char* name : kRunOutputs) std::remove((out_ + "/" + name).c_str());
    }
  }
  // Start-up waits also cover local work (process start, lowering, memory
  // allocation) on a machine the ranks may oversubscribe: at least 2 min.
  const std::chrono::seconds startup_limit = std::max(timeout_, kStartupLimit);
  RETURN_IF_ERROR(MeetAll("the start-up handshake", 0, startup_limit,
                          std::chrono::microseconds(1000))
                      .status());
  if (schedule_.devices_size() != world_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the schedule has %d devices but %d ranks are running: start %d (--ranks=%d, or "
        "mpirun -np %d)",
        schedule_.devices_size(), world_, schedule_.devices_size(), schedule_.devices_size(),
        schedule_.devices_size()));
  }
  if (rank_ == 0 && o_.data == "synthetic") RETURN_IF_ERROR(WriteSyntheticTask(TaskDirectory(o_)));
  RETURN_IF_ERROR(Barrier("writing the task"));  // the outputs and the task are in place
  ASSIGN_OR_RETURN(task_, LoadTask(TaskDirectory(o_), o_.task, schedule_.model(),
                                   schedule_.training().seq_len()));
  data_ = DataOf(o_, task_);
  // Blocking MPI collectives (and NCCL's set-up) from here on.
  Watch watch("setting up (node shared memory, communicators, the device)", startup_limit);
  ASSIGN_OR_RETURN(heartbeats_, Heartbeats::Start(std::chrono::milliseconds(100)));
  const std::string& device = schedule_.devices(rank_).cluster_device();
  const Device* cluster_device = FindDevice(schedule_.cluster(), device);
  if (cluster_device == nullptr) {
    return absl::InvalidArgumentError("no cluster device '" + device + "'");
  }
  RETURN_IF_ERROR(CheckBackendAvailable(o_.backend.name));
  {
    // What this rank itself may map, now that MPI's own mappings are in.
    ASSIGN_OR_RETURN(const MemoryHeadroom headroom, ReadMemoryHeadroom());
    RETURN_IF_ERROR(CheckHostMemory(schedule_, rank_, o_.backend.name == "cpu",
                                    RankZeroCopiesModel(o_), headroom));
  }
  ASSIGN_OR_RETURN(host_memory_, NodeSharedMemory::Allocate(
                                     LayOutHostStore(schedule_, cluster_device->host()).bytes));
  RETURN_IF_ERROR(CheckNodeHosts(schedule_, *host_memory_, cluster_device->host()));
  ASSIGN_OR_RETURN(collectives_,
                   MpiCollectives::Create(CollectiveGroups(schedule_), timeout_));
  ASSIGN_OR_RETURN(backend_, CreateBackend(o_.backend, schedule_, rank_, task_.label_words,
                                           host_memory_.get(), collectives_.get()));
  for (int i = 0; i < schedule_.buffers_size(); ++i) {
    const zosched::Buffer& b = schedule_.buffers(i);
    if (b.kind() == ZO_STATE && b.device() == rank_) zo_state_buffer_ = i;
  }
  if (zo_state_buffer_ < 0) {
    return absl::InternalError(absl::StrFormat("device %d has no ZO_STATE buffer", rank_));
  }
  ASSIGN_OR_RETURN(parts_, StoredParts(schedule_, rank_, *backend_));
  if (rank_ == 0 && !o_.resume) {
    RETURN_IF_ERROR(WriteProtoFile(out_ + "/schedule.pb", schedule_));
  }
  return absl::OkStatus();
}

absl::Status Run::InitParameters() {
  const bool from_file = o_.init != "random";
  for (const StoredPart& part : parts_) {
    // A host store is shared: only the lowest device streaming from it
    // writes it. Resident parts belong to this rank alone.
    ASSIGN_OR_RETURN(const bool mine, WritesPart(part));
    if (!mine) continue;
    std::vector<float> values(part.elements());
    if (from_file) {
      RETURN_IF_ERROR(LoadModelParameters(o_.init, schedule_.model(), part.tensors, FP32,
                                          values.data()));
    } else {
      InitPart(part, o_.init_seed, values.data());
    }
    StorePart(part, values.data());
  }
  RETURN_IF_ERROR(backend_->PushPersistent());
  {
    Watch watch("initialising the parameters (node barrier)", timeout_);
    RETURN_IF_ERROR(host_memory_->NodeBarrier());
  }
  if (o_.checkpoint_every == 0) return absl::OkStatus();
  return WriteCheckpoint("of the initial parameters");
}

absl::Status Run::ApplyOnHost(const ZoState& pending) {
  const float wd = schedule_.training().weight_decay();
  for (const StoredPart& part : parts_) {
    ASSIGN_OR_RETURN(const bool mine, WritesPart(part));
    if (!mine) continue;
    const std::vector<float> values = CurrentPart(part, schedule_.model(), pending, wd);
    StorePart(part, values.data());
  }
  return absl::OkStatus();
}

absl::Status Run::WriteCheckpoint(const std::string& when) {
  RETURN_IF_ERROR(Barrier("the checkpoint " + when));  // every rank's offloads are in the store
  if (rank_ == 0) {
    RETURN_IF_ERROR(backend_->PullPersistent());
    // The log it refers to is on disk before the checkpoint is.
    if (trajectory_ != nullptr) RETURN_IF_ERROR(SyncFile(trajectory_->path()));
    std::vector<ParameterPart> stored;
    for (const StoredPart& part : parts_) stored.push_back({part.tensors, part.dtype, part.data});
    RETURN_IF_ERROR(WriteRunCheckpoint(CheckpointPath(), schedule_, data_, stored, logged_));
  }
  // Nobody changes the store while rank 0 reads it.
  return Barrier("the checkpoint " + when + " (rank 0 writing it)", /*behind_rank0=*/true);
}

absl::Status Run::Resume() {
  const std::string log = out_ + "/trajectory.log";
  if (rank_ == 0) {
    RETURN_IF_ERROR(DropTornLastLine(log));
    std::remove((CheckpointPath() + ".tmp").c_str());  // a checkpoint cut short
  }
  RETURN_IF_ERROR(Barrier("reading the run to resume"));
  ASSIGN_OR_RETURN(std::vector<TrajectoryEntry> entries, ReadRunLog(log, schedule_));
  ASSIGN_OR_RETURN(const RunCheckpoint checkpoint,
                   OpenRunCheckpoint(CheckpointPath(), schedule_, data_, entries));
  for (const StoredPart& part : parts_) {
    // A shared host part is loaded (and replayed) by its owner alone.
    ASSIGN_OR_RETURN(const bool mine, WritesPart(part));
    if (!mine) continue;
    // Each part exactly as stored (its own dtype): bit for bit.
    RETURN_IF_ERROR(LoadModelParameters(CheckpointPath(), schedule_.model(), part.tensors,
                                        part.dtype, part.data));
  }
  // The updates of the steps the log holds past the checkpoint, in order;
  // the last one stays pending, as after an uninterrupted step.
  const auto as_state = [](const TrajectoryEntry& e) {
    ZoState state;
    state.seed = e.seed;
    state.g = e.g;
    state.learning_rate = e.lr;
    return state;
  };
  ZoState pending;  // learning rate 0: nothing pending
  const int64_t covered = checkpoint.trajectory_length;
  if (covered > 0) pending = as_state(entries[covered - 1]);
  for (size_t i = covered; i < entries.size(); ++i) {
    RETURN_IF_ERROR(ApplyOnHost(pending));
    pending = as_state(entries[i]);
  }
  *PendingView() = pending;
  RETURN_IF_ERROR(backend_->PushPersistent());
  start_step_ = entries.empty() ? 0 : entries.back().step + 1;
  if (rank_ == 0) {
    std::printf("resuming at step %d from the checkpoint after step %lld%s\n", start_step_,
                static_cast<long long>(covered == 0 ? -1 : entries[covered - 1].step),
                covered < static_cast<int64_t>(entries.size())
                    ? absl::StrFormat(" and %d steps of trajectory.log replayed on it",
                                      entries.size() - covered)
                          .c_str()
                    : "");
    logged_ = std::move(entries);
  }
  Watch watch("loading the checkpoint (node barrier)", timeout_);
  return host_memory_->NodeBarrier();
}

absl::Status Run::Evaluate(const std::string& label, const ZoState& pending) {
  if (rank_ != 0) return absl::OkStatus();
  const float wd = schedule_.training().weight_decay();
  std::vector<std::vector<float>> values;
  std::vector<const float*> pointers;
  for (const StoredPart& part : parts_) {
    values.push_back(CurrentPart(part, schedule_.model(), pending, wd));
  }
  for (const std::vector<float>& v : values) pointers.push_back(v.data());
  const Evaluation e = zosched::Evaluate(schedule_.model(), pointers, task_.EvalSubset(o_.eval_examples),
                                         task_.label_words,
                                         schedule_.training().micro_batch_size());
  std::printf("%s: dev accuracy %.4f, dev loss %.4f (%d examples)\n", label.c_str(), e.accuracy,
              e.loss, task_.EvalSubset(o_.eval_examples).size());
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Run::Finish() {
  RETURN_IF_ERROR(Barrier("the end of the run"));  // every rank's offloads are in the store
  // The measured timeline first: what follows may take long on a big model
  // (evaluation on the host, fp32 copies, checkpoints).
  absl::StatusOr<Timeline> gathered;
  {
    Watch watch("gathering the measured timeline", timeout_);
    gathered = GatherTimeline(schedule_, *executor_, probes_, rank_, world_);
  }
  ASSIGN_OR_RETURN(Timeline timeline, std::move(gathered));
  if (rank_ == 0) {
    const std::string timeline_out =
        o_.timeline_out.empty() ? out_ + "/timeline.pb" : o_.timeline_out;
    const std::string trace_out = o_.trace_out.empty() ? out_ + "/trace.json" : o_.trace_out;
    RETURN_IF_ERROR(WriteProtoFile(timeline_out, timeline));
    ASSIGN_OR_RETURN(std::string json, ChromeTraceJson(schedule_, {&timeline}));
    RETURN_IF_ERROR(WriteFile(trace_out, json));
    std::printf("wrote %s/{train.csv, trajectory.log, schedule.pb}, %s, %s\n", out_.c_str(),
                timeline_out.c_str(), trace_out.c_str());
  }
  if (o_.checkpoint_every > 0) RETURN_IF_ERROR(WriteCheckpoint("at the end"));
  if (!o_.final_outputs) return absl::OkStatus();
  RETURN_IF_ERROR(backend_->PullPersistent());
  const ZoState pending = *PendingView();
  if (rank_ == 0) {
    const TrainingSettings& t = schedule_.training();
    const ModelSpec& spec = schedule_.model();
    RETURN_IF_ERROR(Evaluate("final", pending));
    const std::string checksum = ParametersChecksum(parts_, spec, pending, t.weight_decay());
    std::printf("final weights checksum: %s\n", checksum.c_str());
    std::vector<ParameterPart> flushed;
    std::vector<std::vector<float>> flushed_values;
    for (const StoredPart& part : parts_) {
      flushed_values.push_back(CurrentPart(part, spec, pending, t.weight_decay()));
    }
    for (size_t i = 0; i < parts_.size(); ++i) {
      flushed.push_back({parts_[i].tensors, FP32, flushed_values[i].data()});
    }
    RETURN_IF_ERROR(SaveModelParameters(out_ + "/weights.safetensors", spec, flushed,
                                        {{"zosched.kind", "weights"},
                                         {"zosched.step", absl::StrCat(o_.steps - 1)},
                                         {"zosched.checksum", checksum}}));
    std::printf("wrote %s/%s\n", out_.c_str(),
                o_.checkpoint_every > 0 ? "{checkpoint.safetensors, weights.safetensors}"
                                        : "weights.safetensors");
  }
  return Barrier("the final outputs (rank 0 writing them)", /*behind_rank0=*/true);
}

ZoState* Run::PendingView() const {
  return reinterpret_cast<ZoState*>(backend_->HostView(zo_state_buffer_));
}

absl::Status Run::LogStep(const Executor::StepOutcome& outcome) {
  if (rank_ != 0) return absl::OkStatus();
  if (!outcome.result.has_gradient) {
    return absl::InternalError("rank 0 ran no PROJECTED_GRADIENT op; nothing to log");
  }
  const TrainingSettings& t = schedule_.training();
  const ZoState& state = outcome.result.pending;
  const int64_t step = outcome.step;
  RETURN_IF_ERROR(trajectory_->Append(step, state.seed, state.g, state.learning_rate));
  logged_.push_back({step, state.seed, state.g, state.learning_rate});
  const StepInterval& interval = executor_->steps().back();
  const double step_s = (interval.end_ns() - interval.start_ns()) * 1e-9;
  const double tokens_per_s = t.batch_size() * t.seq_len() / step_s;
  const double loss = outcome.result.mean_loss;
  csv_ << absl::StrFormat("%d,%.6f,%.9g,%.3f,%.1f\n", step, loss, state.g, step_s * 1e3,
                          tokens_per_s);
  csv_.flush();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const int64_t done = step - start_step_ + 1;
  // At most 5 progress lines a second, and the last step's: on the testbed
  // each line wakes mpirun and the launcher, which take the cores the
  // ranks compute on (about 5 % of a core at 150 steps a second).
  const auto now = std::chrono::steady_clock::now();
  if (step + 1 == o_.steps || now - last_progress_ >= std::chrono::milliseconds(200)) {
    Progress(step, o_.steps, loss, tokens_per_s, elapsed / done * (o_.steps - 1 - step));
    last_progress_ = now;
  }
  return absl::OkStatus();
}

absl::StatusOr<TrainEnd> Run::Go() {
  RETURN_IF_ERROR(Setup());
  if (o_.resume) {
    RETURN_IF_ERROR(Resume());
  } else {
    RETURN_IF_ERROR(InitParameters());
  }
  RETURN_IF_ERROR(CheckStepsLeft(out_, start_step_, o_.steps));
  RETURN_IF_ERROR(Barrier("the start of training"));
  ASSIGN_OR_RETURN(const Executor::Clock::time_point epoch, host_memory_->SharedEpoch());
  ASSIGN_OR_RETURN(executor_, Executor::Create(schedule_, rank_, backend_.get(), epoch));

  const TrainingSettings& t = schedule_.training();
  if (rank_ == 0) {
    // A fresh run starts a fresh log; --resume continues the existing one.
    if (!o_.resume) std::remove((out_ + "/trajectory.log").c_str());
    ASSIGN_OR_RETURN(trajectory_,
                     TrajectoryWriter::Open(out_ + "/trajectory.log", t.base_seed()));
    csv_.open(out_ + "/train.csv", o_.resume ? std::ios::app : std::ios::trunc);
    if (!o_.resume) csv_ << "step,loss,g,step_ms,tokens_per_s\n";
    std::printf("training '%s' on the %s backend: %d rank(s), steps %d..%d, batch %d, seq %d\n",
                schedule_.name().c_str(), o_.backend.name.c_str(), world_, start_step_,
                o_.steps - 1, t.batch_size(), t.seq_len());
  }
  const bool pipelined = PipelinesSteps(o_.backend.name);
  // One batch per step slot: a pipelining backend reads a step's inputs
  // while the host prepares the next.
  std::vector<StepBatch> batches(kStepSlots);
  started_ = std::chrono::steady_clock::now();
  int in_flight = 0;
  for (int step = start_step_; step < o_.steps; ++step) {
    StepBatch& batch = batches[step % kStepSlots];
    task_.FillStep(step, t.batch_size(), t.base_seed(), &batch);
    StepInputs inputs;
    inputs.step = step;
    inputs.seed = StepSeed(t.base_seed(), step);
    inputs.learning_rate = t.learning_rate();
    inputs.tokens = batch.tokens.data();
    inputs.lengths = batch.lengths.data();
    inputs.labels = batch.labels.data();
    RETURN_IF_ERROR(executor_->EnqueueStep(inputs));
    // Every rank meets once a step, voting whether a stop signal came; the
    // step enqueued runs either way and the run stops after it. On the
    // testbed the ranks then start the step together, its ops held until
    // now (the simulator's step starts all devices at once; without this,
    // ranks drift apart by a transfer).
    ASSIGN_OR_RETURN(const int vote,
                     Meet(absl::StrFormat("the meeting at step %d", step), StopSignal()));
    if (o_.speed_probe_every > 0 && step % o_.speed_probe_every == 0) {
      // Every rank has finished the step before and none has started
      // this one: the probe times the core, not the steps' work.
      SpeedProbeSample sample;
      sample.set_device(rank_);
      sample.set_step(step);
      ASSIGN_OR_RETURN(const int64_t ns, backend_->ProbeComputeSpeedNs());
      sample.set_cpu_ns(ns);
      probes_.push_back(sample);
      RETURN_IF_ERROR(Barrier(absl::StrFormat("the speed probe before step %d", step)));
    }
    if (!pipelined) RETURN_IF_ERROR(executor_->Start());
    ++in_flight;
    const bool last = step + 1 == o_.steps;
    const int stop = last ? 0 : vote;  // a stop at the last step: the run just ends
    const bool checkpoint_now =
        o_.checkpoint_every > 0 && !last &&
        (stop != 0 || (step + 1) % o_.checkpoint_every == 0);
    const bool evaluate_now =
        stop == 0 && o_.eval_every > 0 && (step + 1) % o_.eval_every == 0 && !last;
    // Keep one step in flight while the host prepares the next; drain
    // before an evaluation, a checkpoint, a stop and at the end.
    const bool drain = last || evaluate_now || checkpoint_now || stop != 0;
    while (in_flight > (pipelined && !drain ? 1 : 0)) {
      ASSIGN_OR_RETURN(const Executor::StepOutcome outcome, executor_->FinishStep());
      --in_flight;
      RETURN_IF_ERROR(LogStep(outcome));
    }
    if (checkpoint_now) RETURN_IF_ERROR(WriteCheckpoint(absl::StrFormat("after step %d", step)));
    if (stop != 0) {
      if (rank_ == 0) {
        std::printf("%sstopped by SIG%s after step %d%s; continue with --resume\n",
                    isatty(fileno(stdout)) ? "\n" : "", sigabbrev_np(stop), step,
                    o_.checkpoint_every > 0 ? ", checkpoint written" : "");
        std::fflush(stdout);
      }
      return TrainEnd{stop, step};
    }
    if (evaluate_now) {
      RETURN_IF_ERROR(Barrier(absl::StrFormat("the evaluation after step %d", step)));
      if (rank_ == 0 && isatty(fileno(stdout))) std::printf("\n");
      RETURN_IF_ERROR(backend_->PullPersistent());
      RETURN_IF_ERROR(Evaluate(absl::StrFormat("step %d", step + 1), *PendingView()));
      RETURN_IF_ERROR(Barrier(absl::StrFormat("the evaluation after step %d (rank 0 evaluating)", step),
                              /*behind_rank0=*/true));
    }
  }
  if (rank_ == 0 && isatty(fileno(stdout))) std::printf("\n");
  RETURN_IF_ERROR(Finish());
  return TrainEnd{0, o_.steps - 1};
}

}  // namespace

namespace {

// First-order baselines are simulated, never executed: the runtime has no
// backward pass.
absl::Status RefuseFirstOrder(StrategyKind kind, const std::string& what,
                              const std::string& simulate) {
  if (!IsFirstOrder(kind)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is the first-order baseline %s: zosched simulates first-order strategies (DDP, ZeRO, "
      "FSDP) to compare them with ZO, but train executes only mezo, zo2 and distzo2 (it has no "
      "backward pass). Predict it instead: bazel run //sim:simulate -- %s",
      what, StrategyKind_Name(kind), simulate));
}

}  // namespace

absl::StatusOr<Schedule> PrepareSchedule(const TrainOptions& o) {
  Schedule schedule;
  if (!o.schedule.empty()) {
    RETURN_IF_ERROR(ReadProtoFile(o.schedule, &schedule));
  } else {
    RETURN_IF_ERROR(RefuseFirstOrder(o.lowering.strategy, "--strategy",
                                     "--schedule=S.pbtxt, with S lowered by //schedule:lower"));
    ASSIGN_OR_RETURN(ModelSpec model, LoadModelSpec(o.model));
    ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(o.cluster));
    ASSIGN_OR_RETURN(schedule, LowerSchedule(model, cluster, o.lowering));
  }
  ApplyLinkOverrides(o, schedule.mutable_cluster());
  RETURN_IF_ERROR(ValidateSchedule(schedule));
  RETURN_IF_ERROR(RefuseFirstOrder(schedule.strategy().kind(),
                                   absl::StrCat("schedule '", schedule.name(), "' in ", o.schedule),
                                   absl::StrCat("--schedule=", o.schedule)));
  return schedule;
}

absl::Status CheckOutputDirectory(const TrainOptions& o) {
  const std::string out = OutputDir(o.out_dir, "train");
  if (o.resume || o.overwrite) return absl::OkStatus();
  ASSIGN_OR_RETURN(const bool taken, DirectoryHasEntries(out));
  if (!taken) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is not empty (another run's outputs?): --resume continues the run there, "
      "--overwrite replaces it, or choose another --out_dir",
      out));
}

bool RankZeroCopiesModel(const TrainOptions& o) { return o.final_outputs || o.eval_every > 0; }

std::string TaskDirectory(const TrainOptions& o) {
  return o.data == "synthetic" ? OutputDir(o.out_dir, "train") + "/data" : o.data;
}

RunData DataOf(const TrainOptions& o, const TrainingTask& task) {
  return {TaskFingerprint(task), absl::StrFormat("--data=%s --task=%s", o.data, o.task)};
}

absl::Status CheckResumable(const TrainOptions& o, const Schedule& schedule,
                            const RunData& data) {
  const std::string out = OutputDir(o.out_dir, "train");
  ASSIGN_OR_RETURN(const std::vector<TrajectoryEntry> entries,
                   ReadRunLog(out + "/trajectory.log", schedule));
  RETURN_IF_ERROR(
      OpenRunCheckpoint(out + "/checkpoint.safetensors", schedule, data, entries).status());
  return CheckStepsLeft(out, entries.empty() ? 0 : entries.back().step + 1, o.steps);
}

absl::StatusOr<std::chrono::seconds> AutoWaitTimeout(const Schedule& schedule) {
  absl::StatusOr<SimResult> predicted = Simulate(schedule);
  if (!predicted.ok()) {
    return absl::Status(predicted.status().code(),
                        absl::StrCat("predicting the step to set the wait limit: ",
                                     predicted.status().message(),
                                     " (or give one with --collective_timeout_s)"));
  }
  double step_s = 0;
  for (const StepInterval& s : predicted->timeline.steps()) {
    step_s = std::max(step_s, (s.end_ns() - s.start_ns()) * 1e-9);
  }
  return std::chrono::seconds(std::max<int64_t>(60, static_cast<int64_t>(std::ceil(10 * step_s))));
}

absl::StatusOr<TrainEnd> Train(const TrainOptions& options, int rank, int world) {
  auto run = std::make_unique<Run>(options, rank, world);
  absl::StatusOr<TrainEnd> end = run->Go();
  if (!end.ok()) {
    absl::Status status = end.status();
    if (const std::string silent = run->SilentRanks(); !silent.empty()) {
      status = absl::Status(status.code(),
                            absl::StrCat(status.message(), "; stalled or dead on this node: ", silent));
    }
    // The caller aborts the job. No teardown: freeing the shared window and
    // the communicators is collective, and the other ranks may be gone.
    (void)run.release();
    return status;
  }
  Watch watch("releasing the node shared memory and the communicators", run->timeout());
  run.reset();
  return end;
}

}  // namespace zosched
