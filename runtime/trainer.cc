#include "runtime/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/directory_lock.h"
#include "base/files.h"
#include "base/output_dir.h"
#include "base/proto_file.h"
#include "base/status_macros.h"
#include "runtime/backend_factory.h"
#include "models/adapters.h"
#include "runtime/checkpoint/peft_adapters.h"
#include "runtime/checkpoint/run_checkpoint.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/collective_groups.h"
#include "runtime/compute_speed_probe.h"
#include "runtime/evaluate.h"
#include "runtime/executor.h"
#include "runtime/heartbeats.h"
#include "runtime/host_memory_check.h"
#include "runtime/host_store_layout.h"
#include "runtime/measured_timeline.h"
#include "runtime/model_state.h"
#include "runtime/mpi_world.h"
#include "runtime/nn/prefix_init.h"
#include "runtime/node_host_check.h"
#include "runtime/progress_bar.h"
#include "runtime/run_checkpointing.h"
#include "runtime/step_log.h"
#include "runtime/stop_signals.h"
#include "runtime/task.h"
#include "runtime/timeline_causality.h"
#include "runtime/watchdog.h"
#include "runtime/zo/zo_math.h"
#include "schedule/chrome_trace.h"
#include "schedule/cluster_lookup.h"
#include "schedule/param_homes.h"
#include "schedule/training_settings.h"

namespace zosched {
namespace {

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

// "rank 8, alpha 16 LoRA adapters on 2 projection(s)", "a prefix of 5
// virtual tokens": what a run's or a saved adapter's Peft trains, for errors.
std::string AdaptersDescription(const Peft& peft) {
  if (TrainsLora(peft)) {
    return absl::StrFormat("rank %d, alpha %g LoRA adapters on %d projection(s)",
                           peft.lora_rank(), peft.lora_alpha(), LoraTargetsOf(peft).size());
  }
  return absl::StrFormat("a prefix of %d virtual tokens", peft.prefix_tokens());
}

// The least any start-up wait may last (see Run::Setup).
constexpr std::chrono::seconds kStartupLimit(120);

class Run {
 public:
  Run(const TrainOptions& o, const Schedule& schedule, std::chrono::seconds timeout, int rank,
      int world)
      : o_(o), schedule_(schedule), timeout_(timeout), rank_(rank), world_(world) {}
  absl::StatusOr<TrainEnd> Go();
  std::chrono::seconds timeout() const { return timeout_; }
  // What held the job up (Heartbeats), for errors: the ranks of this node
  // that have stalled or died, and the other machines gone silent; "" when
  // none or before set-up.
  std::string Silence() const {
    if (heartbeats_ == nullptr) return "";
    constexpr std::chrono::seconds kSilence(2);
    std::string said;
    if (const std::string ranks = heartbeats_->SilentRanks(kSilence); !ranks.empty()) {
      absl::StrAppend(&said, "; stalled or dead on this node: ", ranks);
    }
    if (const std::string machines = heartbeats_->SilentMachines(kSilence); !machines.empty()) {
      absl::StrAppend(&said, "; no heartbeat from machine ", machines,
                      " (its ranks stopped or died, or its link failed)");
    }
    return said;
  }

 private:
  absl::Status Setup();
  absl::Status InitParameters();
  // Every block's initial prefix (runtime/nn/prefix_init.h) from the base
  // as this node's store holds it, tokens drawn from --init_seed.
  std::vector<std::vector<float>> InitialPrefix() const;
  // Restores the run to resume; returns the entries of its trajectory log.
  absl::StatusOr<std::vector<TrajectoryEntry>> Resume();
  // Whether this rank writes `part`: a shared host part only its owner
  // (the lowest device streaming from it), a resident part always.
  absl::StatusOr<bool> WritesPart(const StoredPart& part) const {
    if (!part.host) return true;
    ASSIGN_OR_RETURN(const int owner, HostBufferOwner(schedule_, part.buffer));
    return owner == rank_;
  }
  // Applies `pending` to this rank's parts as a step's fused update does
  // (storage dtype -> fp32, update, back), host parts by their owner only.
  absl::Status ApplyOnHost(const std::vector<ZoState>& pending);
  // Every rank: the run's checkpoint after the steps logged so far
  // (`when` names it in errors). Rank 0 writes it; the others wait.
  absl::Status WriteCheckpoint(const std::string& when);
  // Rank 0: the dev accuracy and loss of the parameters with `pending`
  // applied, printed under `label`.
  void Evaluate(const std::string& label, const std::vector<ZoState>& pending) const;
  absl::Status Finish();
  // The pending update as the host sees it: ZO_STATE's host view, one entry
  // per direction (pull it from the device first; push it after writing it).
  ZoState* PendingView() const;
  // A copy of it: the step's q entries.
  std::vector<ZoState> Pending() const {
    const ZoState* view = PendingView();
    return std::vector<ZoState>(view, view + DirectionsOf(schedule_.training()));
  }
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
    return MeetAll(what, vote, limit, std::chrono::microseconds(20),
                   collectives_ != nullptr ? collectives_->machines() : std::vector<std::string>{});
  }
  absl::Status Barrier(const std::string& what, bool behind_rank0 = false) {
    return Meet(what, 0, behind_rank0).status();
  }

  const TrainOptions& o_;
  const Schedule& schedule_;
  const std::chrono::seconds timeout_;
  const int rank_, world_;
  std::string out_;
  TrainingTask task_;
  RunData data_;  // what the task is, for the checkpoints
  std::unique_ptr<NodeSharedMemory> host_memory_;
  std::unique_ptr<MpiCollectives> collectives_;
  std::unique_ptr<Backend> backend_;
  ComputeSpeedProbe* speed_probe_ = nullptr;  // backend_'s, with --speed_probe_every
  int zo_state_buffer_ = -1;
  std::unique_ptr<StepLog> log_;  // rank 0, once training starts
  std::vector<StoredPart> parts_;
  std::unique_ptr<Executor> executor_;
  std::vector<SpeedProbeSample> probes_;  // with o_.speed_probe_every
  int start_step_ = 0;
  std::unique_ptr<Heartbeats> heartbeats_;
  std::optional<DirectoryLock> out_dir_lock_;  // with o_.lock_out_dir, rank 0
};

absl::Status Run::Setup() {
  out_ = OutputDir(o_.out_dir, "train");
  // Before anything is written: a fresh run does not overwrite another,
  // nor does it write beside one that runs (train's launcher, or a run of
  // one rank, has checked and locked it already).
  if (rank_ == 0) {
    RETURN_IF_ERROR(MakeDirectories(out_));
    if (o_.lock_out_dir) {
      ASSIGN_OR_RETURN(out_dir_lock_, DirectoryLock::Acquire(out_, "--out_dir"));
      RETURN_IF_ERROR(CheckOutputDirectory(o_));
    }
    if (!o_.resume) RemoveRunOutputs(out_);
  }
  // Start-up waits also cover local work (process start, preparing the
  // schedule, memory allocation) on a machine the ranks may oversubscribe:
  // at least 2 min.
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
  {
    // What this rank itself may map, now that MPI's own mappings are in.
    ASSIGN_OR_RETURN(const MemoryHeadroom headroom, ReadMemoryHeadroom());
    RETURN_IF_ERROR(CheckHostMemory(schedule_, rank_, CapabilitiesOf(o_.backend).arena_in_host_memory,
                                    RankZeroCopiesModel(o_), headroom));
  }
  ASSIGN_OR_RETURN(host_memory_, NodeSharedMemory::Allocate(
                                     LayOutHostStore(schedule_, cluster_device->host()).bytes));
  RETURN_IF_ERROR(CheckNodeIsOneHost(schedule_, *host_memory_, cluster_device->host()));
  ASSIGN_OR_RETURN(collectives_,
                   MpiCollectives::Create(CollectiveGroups(schedule_), timeout_));
  ASSIGN_OR_RETURN(backend_, CreateBackend(o_.backend, schedule_, rank_, task_.label_words,
                                           host_memory_.get(), collectives_.get()));
  if (o_.speed_probe_every > 0) {
    ASSIGN_OR_RETURN(speed_probe_, ComputeSpeedProbeOf(*backend_));
  }
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
  // A host store is shared: only the lowest device streaming from it
  // writes it. Resident parts belong to this rank alone.
  std::vector<const StoredPart*> mine;
  for (const StoredPart& part : parts_) {
    ASSIGN_OR_RETURN(const bool writes, WritesPart(part));
    if (writes) mine.push_back(&part);
  }
  const Peft& peft = schedule_.training().peft();
  std::vector<std::vector<float>> adapters;  // from --init_adapters, or a prefix's initial one
  if (!o_.init_adapters.empty()) {
    if (!TrainsAdapters(peft)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--init_adapters=%s: the schedule '%s' trains every parameter; adapters start a LoRA "
          "or prefix run (--peft=lora or --peft=prefix)",
          o_.init_adapters, schedule_.name()));
    }
    ASSIGN_OR_RETURN(const Peft saved, ReadPeftConfig(o_.init_adapters, schedule_.model()));
    if (saved.kind() != peft.kind() || LoraTargetsOf(saved) != LoraTargetsOf(peft) ||
        saved.lora_rank() != peft.lora_rank() || saved.lora_alpha() != peft.lora_alpha() ||
        saved.prefix_tokens() != peft.prefix_tokens()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--init_adapters=%s holds %s; the run trains %s: lower the schedule with the "
          "adapters' --peft and its --lora_rank, --lora_alpha and --lora_targets or "
          "--prefix_tokens",
          o_.init_adapters, AdaptersDescription(saved), AdaptersDescription(peft)));
    }
    ASSIGN_OR_RETURN(adapters, LoadPeftAdapters(o_.init_adapters, schedule_.model(), peft));
  }
  // A prefix starts from the base's activations, so the base goes in first.
  const bool prefix_from_base = PrefixTokens(peft) > 0 && adapters.empty();
  // The block of each adapter part: they follow the base, in block order.
  std::map<const StoredPart*, int> adapter_block;
  std::vector<const StoredPart*> base, own_adapters;
  for (const StoredPart* part : mine) {
    (part->frozen || !TrainsAdapters(peft) ? base : own_adapters).push_back(part);
  }
  for (const StoredPart& part : parts_) {
    if (TrainsAdapters(peft) && !part.frozen) {
      const int block = static_cast<int>(adapter_block.size());
      adapter_block[&part] = block;
    }
  }
  auto fill = [&](const StoredPart& part, float* values) {
    const bool adapter = TrainsAdapters(peft) && !part.frozen;
    if (adapter && !adapters.empty()) {
      const std::vector<float>& loaded = adapters[adapter_block.at(&part)];
      std::copy(loaded.begin(), loaded.end(), values);
      return absl::OkStatus();
    }
    if (!from_file || adapter) {
      InitPart(part, o_.init_seed, values);
      return absl::OkStatus();
    }
    return LoadModelParameters(o_.init, schedule_.model(), part.tensors, FP32, values);
  };
  RETURN_IF_ERROR(FillParts(base, fill));
  if (prefix_from_base) {
    {
      Watch watch("initialising the base before the prefix (node barrier)", timeout_);
      RETURN_IF_ERROR(host_memory_->NodeBarrier());
    }
    adapters = InitialPrefix();
  }
  RETURN_IF_ERROR(FillParts(own_adapters, fill));
  RETURN_IF_ERROR(backend_->PushPersistent());
  {
    Watch watch("initialising the parameters (node barrier)", timeout_);
    RETURN_IF_ERROR(host_memory_->NodeBarrier());
  }
  if (o_.checkpoint_every == 0) return absl::OkStatus();
  return WriteCheckpoint("of the initial parameters");
}

std::vector<std::vector<float>> Run::InitialPrefix() const {
  const ModelSpec& spec = schedule_.model();
  const float weight_decay = schedule_.training().weight_decay();
  // The base as stored (in the host dtype), in fp32 one part at a time.
  auto current = [&](const std::string& name) {
    for (const StoredPart& part : parts_) {
      if (part.name == name) return CurrentPart(part, spec, {}, weight_decay);
    }
    CHECK(false) << "no stored part '" << name << "'";
    return std::vector<float>();
  };
  const std::vector<float> embedding = current("embedding");
  std::vector<float> block;
  return PrefixFromActivations(
      spec, embedding.data(),
      [&](int64_t b) {
        block = current(absl::StrCat("block ", b));
        return block.data();
      },
      PrefixInitTokens(spec, PrefixTokens(schedule_.training().peft()), o_.init_seed));
}

absl::Status Run::ApplyOnHost(const std::vector<ZoState>& pending) {
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
    if (log_ != nullptr) RETURN_IF_ERROR(log_->Sync());
    std::vector<ParameterPart> stored;
    for (const StoredPart& part : parts_) stored.push_back({part.tensors, part.dtype, part.data});
    static const std::vector<TrajectoryEntry> kNoSteps;  // before the log opens
    RETURN_IF_ERROR(WriteRunCheckpoint(CheckpointPath(out_), schedule_, data_, stored,
                                       log_ != nullptr ? log_->entries() : kNoSteps));
  }
  // Nobody changes the store while rank 0 reads it.
  return Barrier("the checkpoint " + when + " (rank 0 writing it)", /*behind_rank0=*/true);
}

absl::StatusOr<std::vector<TrajectoryEntry>> Run::Resume() {
  if (rank_ == 0) RETURN_IF_ERROR(TidyRunToResume(out_));
  RETURN_IF_ERROR(Barrier("reading the run to resume"));
  ASSIGN_OR_RETURN(RunToResume run, ReadRunToResume(out_, schedule_, data_));
  for (const StoredPart& part : parts_) {
    // A shared host part is loaded (and replayed) by its owner alone.
    ASSIGN_OR_RETURN(const bool mine, WritesPart(part));
    if (!mine) continue;
    // Each part exactly as stored (its own dtype): bit for bit.
    RETURN_IF_ERROR(LoadModelParameters(CheckpointPath(out_), schedule_.model(), part.tensors,
                                        part.dtype, part.data));
  }
  const int64_t covered = run.checkpoint.trajectory_length;
  const LogReplay replay =
      ReplayAfterCheckpoint(run.entries, covered, DirectionsOf(schedule_.training()));
  for (const std::vector<ZoState>& update : replay.apply) RETURN_IF_ERROR(ApplyOnHost(update));
  std::copy(replay.pending.begin(), replay.pending.end(), PendingView());
  RETURN_IF_ERROR(backend_->PushPersistent());
  start_step_ = run.entries.empty() ? 0 : run.entries.back().step + 1;
  if (rank_ == 0) {
    std::printf("resuming at step %d from the checkpoint after step %lld%s\n", start_step_,
                static_cast<long long>(covered == 0 ? -1 : run.entries[covered - 1].step),
                replay.apply.empty()
                    ? ""
                    : absl::StrFormat(" and %d steps of trajectory.log replayed on it",
                                      replay.apply.size())
                          .c_str());
  }
  Watch watch("loading the checkpoint (node barrier)", timeout_);
  RETURN_IF_ERROR(host_memory_->NodeBarrier());
  return std::move(run.entries);
}

void Run::Evaluate(const std::string& label, const std::vector<ZoState>& pending) const {
  if (rank_ != 0) return;
  const EncodedExamples examples = task_.EvalSubset(o_.eval_examples);
  const Evaluation e = EvaluateStoredParts(parts_, schedule_.model(), schedule_.training().peft(),
                                           pending,
                                           schedule_.training().weight_decay(), examples,
                                           task_.label_words,
                                           schedule_.training().micro_batch_size());
  std::printf("%s: dev accuracy %.4f, dev loss %.4f (%d examples)\n", label.c_str(), e.accuracy,
              e.loss, examples.size());
  std::fflush(stdout);
}

// Ranks on different machines time from their own machine's reading of
// the run's epoch, matched to within half a message's round trip; a
// collective whose members' times contradict that by more says the
// timeline's figures across machines are not to be trusted.
void WarnOfClockSlip(const Schedule& schedule, const Timeline& timeline) {
  constexpr int64_t kTolerableNs = 100'000;
  const CausalitySlip slip = LargestCausalitySlip(schedule, timeline);
  if (slip.ns <= kTolerableNs) return;
  std::printf(
      "warning: the measured timeline's clocks disagree: '%s' ended on device %d %.3f ms "
      "before device %d started it (step %d); overlaps read across their machines are off by "
      "at least that\n",
      slip.collective.c_str(), slip.ended_device, slip.ns / 1e6, slip.started_device, slip.step);
}

absl::Status Run::Finish() {
  RETURN_IF_ERROR(Barrier("the end of the run"));  // every rank's offloads are in the store
  // The measured timeline first: what follows may take long on a big model
  // (evaluation on the host, fp32 copies, checkpoints).
  absl::StatusOr<Timeline> gathered;
  {
    Watch watch("gathering the measured timeline", timeout_);
    gathered = GatherMeasuredTimeline(schedule_, *executor_, probes_, o_.backend.name);
  }
  ASSIGN_OR_RETURN(Timeline timeline, std::move(gathered));
  if (rank_ == 0) {
    const std::string timeline_out =
        o_.timeline_out.empty() ? out_ + "/timeline.pb" : o_.timeline_out;
    const std::string trace_out = o_.trace_out.empty() ? out_ + "/trace.json" : o_.trace_out;
    WarnOfClockSlip(schedule_, timeline);
    RETURN_IF_ERROR(WriteProtoFile(timeline_out, timeline));
    ASSIGN_OR_RETURN(std::string json, ChromeTraceJson(schedule_, {&timeline}));
    RETURN_IF_ERROR(WriteFile(trace_out, json));
    std::printf("wrote %s/{train.csv, trajectory.log, schedule.pb}, %s, %s\n", out_.c_str(),
                timeline_out.c_str(), trace_out.c_str());
  }
  if (o_.checkpoint_every > 0) RETURN_IF_ERROR(WriteCheckpoint("at the end"));
  if (!o_.final_outputs) return absl::OkStatus();
  RETURN_IF_ERROR(backend_->PullPersistent());
  const std::vector<ZoState> pending = Pending();
  if (rank_ == 0) {
    const TrainingSettings& t = schedule_.training();
    const ModelSpec& spec = schedule_.model();
    Evaluate("final", pending);
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
    if (TrainsAdapters(t.peft())) {
      // The base is what it was; the adapters go out as PEFT saves them.
      std::vector<std::vector<float>> adapters;
      for (size_t i = 0; i < parts_.size(); ++i) {
        if (!parts_[i].frozen) adapters.push_back(std::move(flushed_values[i]));
      }
      RETURN_IF_ERROR(SavePeftAdapters(out_ + "/adapter", spec, t.peft(), adapters, FP32,
                                       o_.init == "random" ? "" : o_.init));
      std::printf("wrote %s/adapter/{%s, %s}%s\n", out_.c_str(), kPeftConfigFile,
                  kPeftWeightsFile, o_.checkpoint_every > 0 ? " and checkpoint.safetensors" : "");
    } else {
      RETURN_IF_ERROR(SaveModelParameters(out_ + "/weights.safetensors", spec, flushed,
                                          {{"zosched.kind", "weights"},
                                           {"zosched.step", absl::StrCat(o_.steps - 1)},
                                           {"zosched.checksum", checksum}}));
      std::printf("wrote %s/%s\n", out_.c_str(),
                  o_.checkpoint_every > 0 ? "{checkpoint.safetensors, weights.safetensors}"
                                          : "weights.safetensors");
    }
  }
  return Barrier("the final outputs (rank 0 writing them)", /*behind_rank0=*/true);
}

ZoState* Run::PendingView() const {
  return reinterpret_cast<ZoState*>(backend_->HostView(zo_state_buffer_));
}

absl::StatusOr<TrainEnd> Run::Go() {
  RETURN_IF_ERROR(Setup());
  std::vector<TrajectoryEntry> logged;  // the run's trajectory.log so far
  if (o_.resume) {
    ASSIGN_OR_RETURN(logged, Resume());
  } else {
    RETURN_IF_ERROR(InitParameters());
  }
  RETURN_IF_ERROR(CheckStepsLeft(out_, start_step_, o_.steps));
  RETURN_IF_ERROR(Barrier("the start of training"));
  ASSIGN_OR_RETURN(const Executor::Clock::time_point epoch, host_memory_->SharedEpoch());
  ASSIGN_OR_RETURN(executor_, Executor::Create(schedule_, rank_, backend_.get(), epoch));

  const TrainingSettings& t = schedule_.training();
  if (rank_ == 0) {
    ASSIGN_OR_RETURN(log_, StepLog::Open(out_, t, o_.resume, std::move(logged), start_step_,
                                         o_.steps));
    std::printf("training '%s' on the %s backend: %d rank(s), steps %d..%d, batch %d, seq %d\n",
                schedule_.name().c_str(), o_.backend.name.c_str(), world_, start_step_,
                o_.steps - 1, t.batch_size(), t.seq_len());
  }
  const bool pipelined = CapabilitiesOf(o_.backend).pipelines_steps;
  // One batch per step slot: a pipelining backend reads a step's inputs
  // while the host prepares the next.
  std::vector<StepBatch> batches(kStepSlots);
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
      ASSIGN_OR_RETURN(const int64_t ns, speed_probe_->ProbeComputeSpeedNs());
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
      if (rank_ == 0) RETURN_IF_ERROR(log_->Record(outcome, executor_->steps().back()));
    }
    if (checkpoint_now) RETURN_IF_ERROR(WriteCheckpoint(absl::StrFormat("after step %d", step)));
    if (stop != 0) {
      if (rank_ == 0) {
        ProgressBar::EndLine();
        std::printf("stopped by SIG%s after step %d%s; continue with --resume\n",
                    sigabbrev_np(stop), step,
                    o_.checkpoint_every > 0 ? ", checkpoint written" : "");
        std::fflush(stdout);
      }
      return TrainEnd{stop, step};
    }
    if (evaluate_now) {
      RETURN_IF_ERROR(Barrier(absl::StrFormat("the evaluation after step %d", step)));
      if (rank_ == 0) ProgressBar::EndLine();
      RETURN_IF_ERROR(backend_->PullPersistent());
      Evaluate(absl::StrFormat("step %d", step + 1), Pending());
      RETURN_IF_ERROR(Barrier(absl::StrFormat("the evaluation after step %d (rank 0 evaluating)", step),
                              /*behind_rank0=*/true));
    }
  }
  if (rank_ == 0) ProgressBar::EndLine();
  RETURN_IF_ERROR(Finish());
  return TrainEnd{0, o_.steps - 1};
}

}  // namespace

absl::StatusOr<TrainEnd> Train(const TrainOptions& options, const Schedule& schedule,
                               std::chrono::seconds wait_limit, int rank, int world) {
  auto run = std::make_unique<Run>(options, schedule, wait_limit, rank, world);
  absl::StatusOr<TrainEnd> end = run->Go();
  if (!end.ok()) {
    absl::Status status = end.status();
    if (const std::string silence = run->Silence(); !silence.empty()) {
      status = absl::Status(status.code(), absl::StrCat(status.message(), silence));
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
