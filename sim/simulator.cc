#include "sim/simulator.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "sim/compute_speed.h"
#include "sim/cost_model.h"
#include "sim/event_queue.h"
#include "sim/expected_maximum.h"
#include "sim/flows_in_flight.h"
#include "sim/host_core_model.h"
#include "sim/network.h"
#include "sim/op_graph.h"
#include "sim/transfer_routes.h"

namespace zosched {
namespace {

// What happens at an event's time (sim/event_queue.h orders them).
enum class EventType {
  kOpEnd,          // an op ends (a collective: every member)
  kLatencyDone,    // a transfer's fixed latency is over: its flows start
  kDependencyMet,  // an op's dependency is met late (a host-core model's delay)
  kSpeedChange,    // a hold of the host-core model ends: compute speeds change
  kCollectiveGo,   // a collective's members, all arrived, start their transfers
  kTransferThreadRuns,  // a copy's or collective member's thread, having waited for its
                        // core's transfer threads, runs
};

struct EventPayload {
  EventType type;
  int index;    // the op (kSpeedChange: the model's hold; kCollectiveGo: the instance)
  int version;  // for kOpEnd of slowed compute ops; kDependencyMet: the op met
};

// An op's progress (its device and stream: Engine::graph_; the
// dependencies it still waits for: Engine::deps_left_).
struct OpState {
  int collective = -1;  // instance index
  int parts_left = 0;   // copies, collectives: flows in flight
  int version = 0;          // compute ops: of their latest end event
  bool is_compute = false;  // else a copy or a collective
  int64_t start = -1, end = -1;
  // How much the op's start varies from one step to the next (a standard
  // deviation, ns): as much as its last-met dependency's end, counted from
  // where the chain of ops it waited for last met its peers in a
  // collective. Once the op has ended, that of its end, which its
  // successors inherit: a compute op adds its own (Device.compute_spread;
  // the chain's ops vary together, so deviations add); a collective's
  // members start together, at 0 again. `met`: when a dependency was last
  // met (-1: none yet).
  int64_t met = -1;
  double sd = 0;
  // Compute ops: undisturbed ns left (from the start: all of its duration),
  // current speed, since when.
  double work_left = 0;
  double speed = 1;
  int64_t work_since = 0;
  const Path* path = nullptr;  // copies: the route (collectives: their instance's)
  // Copies: bytes over the route; collective members: their own chunk's
  // bytes (the rest of the collective's bytes are the others' chunks).
  double copy_bytes = 0;
};

struct CollectiveInstance {
  std::vector<int> ops;
  int arrived = 0;
  const CollectiveRoute* route = nullptr;
};

}  // namespace

// The simulation's state. Prepare resets every member, so a simulation
// depends on its schedule alone; their memory stays for the next one.
class Simulator::Engine {
 public:
  // Simulates `schedule` on `network` at `costs` (both built from it), its
  // devices computing at `speed` and, on the CPU testbed, contending for
  // host cores as `host_cores` says, into `*result` (Simulator::Simulate's
  // contract).
  absl::Status Run(const Schedule& schedule, const Network& network, const CostModel& costs,
                   ComputeSpeed speed, std::optional<HostCoreModel> host_cores,
                   SimResult* result);

 private:
  // Prepare's steps: each op on its stream (graph_) and what it does (its
  // cost or route), returning how many flows may be in flight at once at
  // most; the ops' successors (OpGraph::Link); the state of the run.
  absl::Status Prepare();
  absl::StatusOr<int> ReadOps();
  void ResetRun(int flow_count);

  // The event loop, from time 0 until nothing is pending.
  void Loop();
  void Process(const EventPayload& event, int64_t now);
  // FailedPrecondition naming the first ops that never ran, if any.
  absl::Status CheckFinished() const;
  // Writes the finished simulation into `*result`.
  void Report(SimResult* result) const;

  void Push(int64_t time, EventType type, int index, int version = 0) {
    events_.Push(time, {type, index, version});
  }
  // One of `op`'s dependencies, `from`, is met at `now`. The op starts as
  // its last dependency is met, and varies as that one's end does (of
  // several met at once, the most varying).
  void DependencyMet(int op, int from, int64_t now) {
    OpState& s = ops_[op];
    const double sd = ops_[from].sd;
    s.sd = s.met == now ? std::max(s.sd, sd) : sd;
    s.met = now;
    if (--deps_left_[op] == 0) Ready(op, now);
  }
  // Op `op`'s dependencies are all met at `now`: it starts, once its
  // thread runs (a transfer thread may wait for its core).
  void Ready(int op, int64_t now);
  // A collective member's stream reaches it at `now`.
  void Arrive(int op, int64_t now);
  // When collective `instance`, whose last member arrived at `now`, starts:
  // the expected latest of its members' arrivals, each varying as its
  // start does (OpState::sd), taken as independent.
  int64_t CollectiveStart(int instance, int64_t now) const;
  // Collective `instance` starts its transfers at `now`.
  void Go(int instance, int64_t now);
  void Start(int op, int64_t now);
  // Op `op` (a copy, or a collective's member as the collective goes)
  // starts moving bytes at `now`.
  void StartTransfer(int op, int64_t now);
  // The thread of copy or collective member `op` wakes at `now` (unless
  // its stream's previous op just ended: it goes straight on).
  void WakeTransferThread(int op, int64_t now);
  void StartFlows(int op, int64_t now);
  // StartFlows `latency_ns` from `now` (at once when there is none).
  void StartFlowsAfter(int op, int64_t latency_ns, int64_t now) {
    if (latency_ns > 0) {
      Push(now + latency_ns, EventType::kLatencyDone, op);
    } else {
      StartFlows(op, now);
    }
  }
  void Finish(int op, int64_t now);
  // Op `op` has ended at `now`: its successors' dependencies on it are met,
  // at once or as late as the host-core model says.
  void ReleaseSuccessors(int op, int64_t now);
  void ReleaseSuccessorsLate(int op, int64_t now);
  // A copy or collective of `device` starts (+1) or ends (-1) at `now`.
  void SetCommActive(int device, int delta, int64_t now) {
    if (speed_.CommChanged(device, delta)) Retime(device, now);
  }
  // Settles the work done by `device`'s running compute ops at their old
  // speed and reschedules their ends at the current speed.
  void Retime(int device, int64_t now);
  void Retime(const std::vector<int>& devices, int64_t now) {
    for (int d : devices) Retime(d, now);
  }
  // Does what the host-core model asks after a call that returned `change`.
  void Apply(const HostCoreModel::Change& change, int64_t now) {
    if (change.retime == nullptr) return;
    Retime(*change.retime, now);
    if (change.hold >= 0) Push(now + change.hold_ns, EventType::kSpeedChange, change.hold);
  }
  bool IsComm(int op) const { return !ops_[op].is_compute; }
  bool SharesCores(int device) const { return host_cores_ && host_cores_->SharesCores(device); }
  // Whether anything changes `device`'s compute speed while an op runs.
  bool SpeedVaries(int device) const { return !speed_.Constant(device) || SharesCores(device); }
  // Whether op `op`'s stream has run everything before it: its thread is
  // asleep until `op`'s dependencies are met.
  bool Asleep(int op) const {
    const int previous = graph_.previous_on_stream(op);
    return previous < 0 || ops_[previous].end >= 0;
  }

  // This simulation's schedule, network, costs and compute speeds.
  const Schedule* schedule_ = nullptr;
  const Network* network_ = nullptr;
  const CostModel* costs_ = nullptr;
  ComputeSpeed speed_;
  // The CPU testbed's host cores; none for a cluster without their figures.
  std::optional<HostCoreModel> host_cores_;
  OpGraph graph_;
  std::vector<OpState> ops_;    // per op
  std::vector<int> deps_left_;  // per op: the dependencies it still waits for
  absl::flat_hash_map<absl::string_view, int> instance_of_;  // collective key -> instance
  TransferRoutes routes_;
  // The first collective_count_ are this simulation's; the rest keep their
  // memory for the next.
  std::vector<CollectiveInstance> collectives_;
  int collective_count_ = 0;
  // Per device whose speed can change: its running compute ops.
  std::vector<std::vector<int>> computing_;
  EventQueue<EventPayload> events_;
  FlowsInFlight flows_;
  std::vector<int> done_flows_;  // the event loop's scratch: their ops
  std::vector<HostCoreModel::Change> handoffs_;  // and the turns' hand-offs
  // Per device: Device.compute_spread.
  std::vector<double> spread_;
  int finished_ = 0;
  int64_t processed_ = 0;
};

absl::Status Simulator::Engine::Prepare() {
  graph_.Reset(*schedule_);
  routes_.Reset(*schedule_, *network_, *costs_);
  ASSIGN_OR_RETURN(const int flow_count, ReadOps());
  RETURN_IF_ERROR(graph_.Link());
  ResetRun(flow_count);
  return absl::OkStatus();
}

absl::StatusOr<int> Simulator::Engine::ReadOps() {
  const int n = schedule_->ops_size();
  ops_.resize(n);
  collective_count_ = 0;
  instance_of_.clear();
  int flow_count = 0;  // at most: one per copy, one per edge of a collective's plan
  for (int i = 0; i < n; ++i) {
    const Op& op = schedule_->ops(i);
    RETURN_IF_ERROR(graph_.Place(i, op));
    OpState& s = ops_[i];
    s = OpState();  // (here, not in a pass of its own over ops_, which the cache does not hold)
    if (op.has_compute()) {
      s.is_compute = true;
      ASSIGN_OR_RETURN(const int64_t ns, costs_->ComputeNs(op));
      s.work_left = ns;
    } else if (op.has_copy()) {
      s.copy_bytes = op.copy().bytes();
      ++flow_count;
      ASSIGN_OR_RETURN(s.path, routes_.CopyRoute(op));
    } else if (op.has_collective()) {
      auto [it, inserted] = instance_of_.emplace(op.collective().key(), collective_count_);
      if (inserted) {
        if (collective_count_ == static_cast<int>(collectives_.size())) collectives_.emplace_back();
        CollectiveInstance& instance = collectives_[collective_count_++];
        instance.ops.clear();
        instance.arrived = 0;
        ASSIGN_OR_RETURN(instance.route, routes_.RouteOf(op));
        instance.ops.reserve(op.collective().participants_size());
        flow_count += instance.route->paths.size();
      }
      s.collective = it->second;
      s.copy_bytes = op.collective().send().size_bytes();
      collectives_[it->second].ops.push_back(i);
    } else {
      return absl::InvalidArgumentError(
          absl::StrFormat("op %d '%s' has no kind", op.id(), op.name()));
    }
  }
  return flow_count;
}

void Simulator::Engine::ResetRun(int flow_count) {
  deps_left_.resize(graph_.size());
  for (int i = 0; i < graph_.size(); ++i) deps_left_[i] = graph_.dependencies(i);
  computing_.resize(schedule_->devices_size());
  for (std::vector<int>& running : computing_) running.clear();
  spread_.resize(schedule_->devices_size());
  for (int d = 0; d < schedule_->devices_size(); ++d) {
    spread_[d] = schedule_->cluster().devices(costs_->ClusterIndex(d)).compute_spread();
  }
  events_.Clear();
  flows_.Reset(*network_, flow_count);
  finished_ = 0;
  processed_ = 0;
}

void Simulator::Engine::Ready(int op, int64_t now) {
  if (host_cores_ && IsComm(op)) {
    // Its thread wakes and, once the transfer threads before it on its
    // core are done, takes the CPU of its start: a copy's conversion of its
    // bytes; a collective member's chunk copied into the staging slots, with
    // its wake-up and the meeting (the fixed part). The core computes
    // nothing until then, so the CPU is taken now: a compute op ready
    // meanwhile does not start before it (a measured op starts when its
    // thread first runs).
    const int device = graph_.device(op);
    const int64_t wait = host_cores_->TransferThreadWaitNs(device, now);
    WakeTransferThread(op, now);
    const bool collective = ops_[op].collective >= 0;
    Apply(host_cores_->TakeTransferCpu(device, ops_[op].copy_bytes, collective,
                                       /*fixed=*/collective, now),
          now);
    if (wait > 0) {
      Push(now + wait, EventType::kTransferThreadRuns, op);
      return;
    }
  }
  Start(op, now);
}

void Simulator::Engine::Arrive(int op, int64_t now) {
  // A member's interval starts when its stream reaches it, as a measured
  // one does: the wait for the other members is part of it.
  ops_[op].start = now;
  const int instance = ops_[op].collective;
  CollectiveInstance& c = collectives_[instance];
  if (++c.arrived < static_cast<int>(c.ops.size())) return;
  const int64_t start = CollectiveStart(instance, now);
  if (start > now) {
    Push(start, EventType::kCollectiveGo, instance);
    return;
  }
  Go(instance, now);
}

int64_t Simulator::Engine::CollectiveStart(int instance, int64_t now) const {
  const CollectiveInstance& c = collectives_[instance];
  const auto varies = [&](int member) { return ops_[member].sd > 0; };
  if (std::none_of(c.ops.begin(), c.ops.end(), varies)) return now;  // a GPU's: at once
  std::vector<Arrival> arrivals;
  for (int member : c.ops) {
    arrivals.push_back({static_cast<double>(ops_[member].start - now), ops_[member].sd});
  }
  return now + std::max<int64_t>(0, CeilToInt64(ExpectedMaximum(arrivals) - 1e-9));
}

void Simulator::Engine::Go(int instance, int64_t now) {
  const CollectiveInstance& c = collectives_[instance];
  for (int member : c.ops) {
    ops_[member].sd = 0;  // they meet here
    StartTransfer(member, now);
  }
  const int first = c.ops[0];
  if (c.route->plan.measured) {
    Push(now + c.route->plan.measured_ns, EventType::kOpEnd, first);
  } else {
    StartFlowsAfter(first, c.route->plan.latency_ns, now);
  }
}

void Simulator::Engine::Start(int op, int64_t now) {
  OpState& s = ops_[op];
  if (s.collective >= 0) {
    Arrive(op, now);
    return;
  }
  if (IsComm(op)) {
    StartTransfer(op, now);
    StartFlowsAfter(op, s.path->latency_ns, now);
    return;
  }
  const int device = graph_.device(op);
  // On a shared core the op starts when its thread first gets the core (a
  // measured op starts when its thread runs it): Retime records it.
  s.start = SharesCores(device) ? -1 : now;
  s.speed = 1;
  s.work_since = now;
  if (!SpeedVaries(device)) {
    // The common case (a GPU): nothing changes its speed, so nothing
    // retimes it and it need not be in computing_.
    ++s.version;
    Push(now + CeilToInt64(s.work_left - 1e-9), EventType::kOpEnd, op, s.version);
    return;
  }
  computing_[device].push_back(op);
  if (SharesCores(device)) {
    Retime(host_cores_->ComputeStarted(device), now);  // this op, and its core mates
  } else {
    Retime(device, now);
  }
}

void Simulator::Engine::StartTransfer(int op, int64_t now) {
  OpState& s = ops_[op];
  const int device = graph_.device(op);
  SetCommActive(device, +1, now);
  if (s.collective < 0) {
    s.start = now;  // its thread took the CPU of its start as it ran (Ready)
    return;
  }
  if (!host_cores_) return;
  // A member that arrived earlier slept at the meeting: the last arrival
  // wakes it. Each copies the others' chunks out and sleeps the link's
  // time.
  if (s.start < now) Apply(host_cores_->WakeTransferThread(device), now);
  const double others = schedule_->ops(op).collective().bytes() - s.copy_bytes;
  Apply(host_cores_->TakeTransferCpu(device, std::max(0.0, others), true, /*fixed=*/false, now),
        now);
}

void Simulator::Engine::WakeTransferThread(int op, int64_t now) {
  const int previous = graph_.previous_on_stream(op);
  if (previous < 0 || ops_[previous].end < now) {
    Apply(host_cores_->WakeTransferThread(graph_.device(op)), now);
  }
}

void Simulator::Engine::StartFlows(int op, int64_t now) {
  OpState& s = ops_[op];
  const CollectiveRoute* route = s.collective >= 0 ? collectives_[s.collective].route : nullptr;
  const double bytes = route != nullptr ? route->plan.flow_bytes : s.copy_bytes;
  const Path* const* paths = route != nullptr ? route->paths.data() : &s.path;
  const int count = route != nullptr ? route->paths.size() : 1;
  s.parts_left = flows_.Start(op, paths, count, bytes, now);
  if (s.parts_left == 0) Finish(op, now);
}

void Simulator::Engine::Finish(int op, int64_t now) {
  const int instance = ops_[op].collective;
  const int* members = instance >= 0 ? collectives_[instance].ops.data() : &op;
  const int count = instance >= 0 ? collectives_[instance].ops.size() : 1;
  for (int k = 0; k < count; ++k) {
    const int m = members[k];
    const int device = graph_.device(m);
    ops_[m].end = now;
    ++finished_;
    if (IsComm(m)) {
      SetCommActive(device, -1, now);
      if (host_cores_) {
        Apply(host_cores_->WakeTransferThread(device), now);
        if (ops_[m].collective < 0) {
          Apply(host_cores_->TakeTransferCpu(device, 0, false, /*fixed=*/true, now), now);
        }
      }
    } else {
      // A step's ops run slow or fast together (the core's speed drifts over
      // milliseconds), so their spreads add up, not in quadrature.
      ops_[m].sd += spread_[device] * (now - ops_[m].start);
      if (SpeedVaries(device)) {
        auto& running = computing_[device];
        running.erase(std::find(running.begin(), running.end(), m));
        if (SharesCores(device)) Retime(host_cores_->ComputeEnded(device), now);
      }
    }
  }
  for (int k = 0; k < count; ++k) ReleaseSuccessors(members[k], now);
}

void Simulator::Engine::ReleaseSuccessors(int op, int64_t now) {
  if (host_cores_ && host_cores_->DelaysWakeUps()) {
    ReleaseSuccessorsLate(op, now);
    return;
  }
  for (int next : graph_.successors(op)) DependencyMet(next, op, now);
}

void Simulator::Engine::ReleaseSuccessorsLate(int op, int64_t now) {
  // A stream asleep on this op's end is woken: it starts its wake-up
  // latency later, and waking it costs this op's stream its signalling
  // cost before its next op. A stream still busy finds the event recorded
  // when it gets there: neither applies.
  const int device = graph_.device(op), stream = graph_.stream(op);
  bool wakes = false;
  for (int next : graph_.successors(op)) wakes |= graph_.stream(next) != stream && Asleep(next);
  // The wake-up call runs on the waking thread's core: on the testbed a
  // core that other devices may be computing on.
  if (wakes) Apply(host_cores_->Signal(device, !IsComm(op)), now);
  for (int next : graph_.successors(op)) {
    int64_t delay = 0;
    if (graph_.stream(next) != stream) {
      delay = Asleep(next) ? host_cores_->WakeLatencyNs(device, graph_.device(next)) : 0;
    } else if (wakes) {
      delay = host_cores_->SignalCostNs(device);
    }
    if (delay > 0) {
      Push(now + delay, EventType::kDependencyMet, next, op);
    } else {
      DependencyMet(next, op, now);
    }
  }
}

void Simulator::Engine::Retime(int device, int64_t now) {
  double speed = speed_.Speed(device);
  if (host_cores_) speed = host_cores_->Speed(device, speed);
  for (int op : computing_[device]) {
    OpState& s = ops_[op];
    s.work_left -= (now - s.work_since) * s.speed;
    s.work_since = now;
    if (s.start < 0 && speed > 0) s.start = now;
    if (s.speed == speed && s.version > 0) continue;  // its end event stands
    s.speed = speed;
    ++s.version;
    if (speed <= 0) continue;  // stalled: the next retime schedules its end
    Push(now + CeilToInt64(std::max(0.0, s.work_left) / s.speed - 1e-9), EventType::kOpEnd, op,
         s.version);
  }
}

absl::Status Simulator::Engine::Run(const Schedule& schedule, const Network& network,
                                    const CostModel& costs, ComputeSpeed speed,
                                    std::optional<HostCoreModel> host_cores,
                                    SimResult* result) {
  schedule_ = &schedule;
  network_ = &network;
  costs_ = &costs;
  speed_ = std::move(speed);
  host_cores_ = std::move(host_cores);
  RETURN_IF_ERROR(Prepare());
  Loop();
  RETURN_IF_ERROR(CheckFinished());
  Report(result);
  return absl::OkStatus();
}

void Simulator::Engine::Loop() {
  events_.Reserve(4 * ops_.size());  // room for the events in flight
  for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
    if (deps_left_[i] == 0) Ready(i, 0);
  }
  if (flows_.changed()) flows_.Reshare(0);
  while (!events_.empty() || flows_.waiting()) {
    const int64_t now = events_.empty()   ? flows_.next_wakeup()
                        : !flows_.waiting() ? events_.top().time
                                            : std::min(events_.top().time, flows_.next_wakeup());
    flows_.Advance(now);
    while (!events_.empty() && events_.top().time == now) {
      const EventPayload event = events_.top().payload;
      events_.Pop();
      ++processed_;
      Process(event, now);
    }
    processed_ += flows_.PopWakeups(now);
    done_flows_.clear();
    flows_.TakeDone(now, &done_flows_);
    for (int op : done_flows_) {
      if (--ops_[op].parts_left == 0) Finish(op, now);
    }
    if (flows_.changed()) flows_.Reshare(now);
    // Cores change hands once everything at `now` has happened.
    if (host_cores_) {
      if (const std::vector<int>* changed = host_cores_->Reschedule(&handoffs_)) {
        Retime(*changed, now);
      }
      for (const HostCoreModel::Change& hold : handoffs_) Apply(hold, now);
    }
  }
}

void Simulator::Engine::Process(const EventPayload& event, int64_t now) {
  switch (event.type) {
    case EventType::kOpEnd:
      if (ops_[event.index].collective >= 0 || ops_[event.index].version == event.version) {
        Finish(event.index, now);
      }
      break;
    case EventType::kLatencyDone:
      StartFlows(event.index, now);
      break;
    case EventType::kDependencyMet:
      DependencyMet(event.index, event.version, now);
      break;
    case EventType::kSpeedChange:
      Retime(host_cores_->Release(event.index), now);
      break;
    case EventType::kCollectiveGo:
      Go(event.index, now);
      break;
    case EventType::kTransferThreadRuns:
      Start(event.index, now);
      break;
  }
}

absl::Status Simulator::Engine::CheckFinished() const {
  if (finished_ == static_cast<int>(ops_.size())) return absl::OkStatus();
  std::vector<std::string> stuck;
  for (int i = 0; i < static_cast<int>(ops_.size()) && stuck.size() < 3; ++i) {
    if (ops_[i].end < 0) {
      stuck.push_back(
          absl::StrFormat("op %d '%s'", schedule_->ops(i).id(), schedule_->ops(i).name()));
    }
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "the schedule cannot finish: %d of %d ops never ran (first: %s); run ValidateSchedule "
      "to find the cycle or the collective a participant never reaches",
      ops_.size() - finished_, ops_.size(), absl::StrJoin(stuck, ", ")));
}

void Simulator::Engine::Report(SimResult* result) const {
  result->events = processed_;
  Timeline& t = result->timeline;
  // All cleared but the op intervals, which are kept for reuse and cleared
  // one by one as they are overwritten below: one pass over them, not two
  // (they are more than the cache holds).
  google::protobuf::RepeatedPtrField<OpInterval>& ops = *t.mutable_ops();
  google::protobuf::RepeatedPtrField<OpInterval> kept;
  kept.Swap(&ops);
  t.Clear();
  ops.Swap(&kept);
  t.set_source(PREDICTED);
  t.set_producer("zosched sim");
  t.set_schedule_name(schedule_->name());
  t.set_cluster_name(schedule_->cluster().name());
  const int n = ops_.size();
  while (ops.size() > n) ops.RemoveLast();
  ops.Reserve(n);
  // The step ends with its last op. (Not at the last event: an end event a
  // retimed compute op left behind, or a host-core hold, may come later.)
  int64_t end = 0;
  for (int i = 0; i < n; ++i) {
    OpInterval* o = i < ops.size() ? ops.Mutable(i) : ops.Add();
    o->Clear();
    o->set_op_id(graph_.dense_ids() ? i : schedule_->ops(i).id());
    o->set_device(graph_.device(i));
    // In place: cheaper than set_stream.
    *o->mutable_stream() = graph_.stream_name(graph_.stream(i));
    o->set_step(0);
    o->set_start_ns(ops_[i].start);
    o->set_end_ns(ops_[i].end);
    end = std::max(end, ops_[i].end);
  }
  StepInterval* step = t.add_steps();
  step->set_step(0);
  step->set_start_ns(0);
  step->set_end_ns(end);
  const std::vector<SimLink>& links = network_->links();
  const std::vector<double>& bytes = flows_.link_bytes();
  result->links.resize(links.size());
  for (size_t l = 0; l < links.size(); ++l) {
    LinkUsage& u = result->links[l];
    u.name = links[l].name;
    u.link_class = links[l].link_class;
    u.capacity_gbps = links[l].capacity;
    u.bytes = bytes[l];
    u.busy_ns = flows_.link_busy_ns()[l];
    u.utilisation = end > 0 ? bytes[l] / (links[l].capacity * end) : 0;
  }
}

Simulator::Simulator() : engine_(std::make_unique<Engine>()) {}

Simulator::~Simulator() = default;

absl::Status Simulator::Simulate(const Schedule& schedule, SimResult* result) {
  ASSIGN_OR_RETURN(Network network, Network::Build(schedule.cluster()));
  ASSIGN_OR_RETURN(CostModel costs, CostModel::Build(schedule));
  std::vector<int> cluster_index;
  for (int d = 0; d < schedule.devices_size(); ++d) cluster_index.push_back(costs.ClusterIndex(d));
  ASSIGN_OR_RETURN(std::optional<HostCoreModel> host_cores,
                   HostCoreModel::Build(schedule, cluster_index));
  return engine_->Run(schedule, network, costs, ComputeSpeed::Build(schedule, cluster_index),
                      std::move(host_cores), result);
}

absl::StatusOr<SimResult> Simulate(const Schedule& schedule) {
  Simulator simulator;
  SimResult result;
  RETURN_IF_ERROR(simulator.Simulate(schedule, &result));
  return result;
}

}  // namespace zosched
