#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "sim/compute_speed.h"
#include "sim/cost_model.h"
#include "sim/event_queue.h"
#include "sim/flow_sharing.h"
#include "sim/network.h"

namespace zosched {
namespace {

enum class EventType { kOpEnd, kLatencyDone, kWokenUp, kTransferCpuDone, kSignalCpuDone };

// What happens at an event's time (sim/event_queue.h orders them).
struct EventPayload {
  EventType type;
  int index;    // the op
  int version;  // for kOpEnd of slowed compute ops
};

struct Flow {
  int op = 0;                         // the op it belongs to (for a collective:
                                      // the instance's first op)
  const std::vector<int>* links = nullptr;
  double remaining = 0;               // bytes
  double rate = 0;                    // bytes per ns
  int64_t end_wakeup = -1;            // its latest time in Engine::flow_wakeups_
};

struct OpState {
  int device = 0;
  int stream = 0;  // global stream index (Engine::stream_names_)
  int deps_left = 0;
  int collective = -1;  // instance index
  // Work in flight: latency phase + flows (copies, collectives).
  int parts_left = 0;
  int version = 0;          // compute ops: of their latest end event
  bool is_compute = false;  // else a copy or a collective
  int64_t start = -1, end = -1;
  // Compute ops: undisturbed ns left (from the start: all of its duration),
  // current speed, since when.
  double work_left = 0;
  double speed = 1;
  int64_t work_since = 0;
  const Path* path = nullptr;  // copies: the route (collectives: their instance's)
  double copy_bytes = 0;       // copies: bytes over the route
};

std::vector<double> LinkCapacities(const Network& network) {
  std::vector<double> capacities;
  for (const SimLink& link : network.links()) capacities.push_back(link.capacity);
  return capacities;
}

// How a collective runs: its plan and each plan edge's route (Engine::PeerPath's).
// Collectives of the same kind, size and participants share one.
struct CollectiveRoute {
  CollectivePlan plan;
  std::vector<const Path*> paths;
};

struct CollectiveInstance {
  std::vector<int> ops;
  int arrived = 0;
  const CollectiveRoute* route = nullptr;
};

}  // namespace

// The simulation's state. Prepare resets every member (but flow_wakeups_,
// which every Run leaves empty), so a simulation depends on its schedule
// alone; their memory stays for the next one.
class Simulator::Engine {
 public:
  // Simulates `schedule` on `network` at `costs` (both built from it) into
  // `*result` (Simulator::Simulate's contract).
  absl::Status Run(const Schedule& schedule, const Network& network, const CostModel& costs,
                   ComputeSpeed speed, SimResult* result);

 private:
  absl::Status Prepare();
  // Writes the finished simulation into `*result`.
  void Report(SimResult* result) const;
  // The route from cluster device `from` to `to`, built once.
  absl::StatusOr<const Path*> PeerPath(int from, int to);
  // The route of collective op `op`, built once per kind, size and
  // participants.
  absl::StatusOr<const CollectiveRoute*> RouteOf(const Op& op);
  void Push(int64_t time, EventType type, int index, int version = 0) {
    events_.Push(time, {type, index, version});
  }
  void Ready(int op, int64_t now);
  void Start(int op, int64_t now);
  void StartFlows(int op, int64_t now);
  void Finish(int op, int64_t now);
  void SetCommActive(int device, int delta, int64_t now);
  // Op `op` (a copy or a collective's member) moving `bytes` takes its
  // device's transfer CPU from the core group, if any, from `now`.
  void TakeTransferCpu(int op, double bytes, int64_t now);
  // Op `op`'s (a copy's or a collective's member's) thread wakes at `now`
  // (to start it, or at its end): a compute op running on its device's
  // transfer core loses that device's interrupt CPU, out of that core.
  void InterruptCompute(int op, int64_t now);
  // Op `op` (a copy or a collective's member) starts at `now`: its thread
  // wakes for it unless its stream's previous op ended just now (the
  // thread goes straight on).
  void WakeToStart(int op, int64_t now) {
    const int previous = prev_on_stream_[op];
    if (previous < 0 || ops_[previous].end < now) InterruptCompute(op, now);
  }
  // Settles the work done by `device`'s running compute ops at their old
  // speed and reschedules their ends at the current speed.
  void Retime(int device, int64_t now);
  // Retime for every device of `device`'s core group (or just `device`).
  void RetimeGroup(int device, int64_t now);
  void AdvanceFlows(int64_t now);
  void ReshareFlows(int64_t now);
  bool IsComm(int op) const { return !ops_[op].is_compute; }
  // Whether op `op`'s stream has run everything before it: its thread is
  // asleep until `op`'s dependencies are met.
  bool Asleep(int op) const {
    const int previous = prev_on_stream_[op];
    return previous < 0 || ops_[previous].end >= 0;
  }

  // This simulation's schedule, network and costs.
  const Schedule* schedule_ = nullptr;
  const Network* network_ = nullptr;
  const CostModel* costs_ = nullptr;
  ComputeSpeed speed_;
  FlowSharing sharing_;
  std::vector<OpState> ops_;
  // Per schedule device: its streams' wake-up latency and signalling cost
  // (ns), and whether either is set on any device.
  std::vector<int64_t> wake_ns_, signal_ns_;
  bool wakes_cost_ = false;
  // Per schedule device in a core group: the host CPU its copies and
  // collectives take, ns per op and per byte (Device.transfer_cpu_s,
  // transfer_cpu_gbps); 0 elsewhere.
  std::vector<double> transfer_cpu_ns_, transfer_cpu_ns_per_byte_;
  // Per schedule device in a core group: what a transfer thread's wake-up
  // costs a compute op running on its core, ns (Device.interrupt_cpu_s); 0
  // elsewhere.
  std::vector<int64_t> interrupt_ns_;
  // Prepare's scratch. Streams: per device its (name, global index) pairs,
  // a handful each.
  std::vector<std::vector<std::pair<absl::string_view, int>>> streams_;
  std::vector<int> last_on_stream_, next_on_stream_, prev_on_stream_;  // op indices, or -1
  absl::flat_hash_map<absl::string_view, int> instance_of_;  // collective key -> instance
  std::vector<std::pair<int64_t, int64_t>> edges_;  // (from, to): ids, then indices
  std::vector<int> fill_;
  bool dense_ids_ = false;  // op i has id i (then the Timeline needs no lookup)
  // Each global stream's name (the schedule's own strings).
  std::vector<const std::string*> stream_names_;
  // Successors of op i: successors_[successor_begin_[i] .. successor_begin_[i + 1]),
  // the next op on its stream first, then its edges in schedule order.
  std::vector<int> successor_begin_, successors_;
  // Routes, built once per simulation: host<->device by cluster device,
  // device->device by (from, to) cluster devices, collectives by kind, size
  // and participants. (Sized once or in deques, filled on first use: ops,
  // flows and collective routes keep pointers into them.)
  std::vector<Path> h2d_paths_, d2h_paths_;
  std::vector<bool> host_paths_built_;
  std::deque<Path> d2d_paths_;
  std::vector<int> d2d_path_of_;  // [from × cluster devices + to]: index, or -1
  std::deque<CollectiveRoute> collective_routes_;
  absl::flat_hash_map<std::tuple<CollectiveKind, int64_t, absl::Span<const int32_t>>,
                      const CollectiveRoute*>
      collective_route_of_;
  std::vector<CollectiveInstance> collectives_;
  // Per device whose speed can change: its running compute ops.
  std::vector<std::vector<int>> computing_;
  EventQueue<EventPayload> events_;
  // Times at which a flow may end, earliest first: the loop wakes then and
  // finds the flows that are done. A flow's end moves when its rate changes;
  // the time it was to end at still wakes the loop, whose flows then advance
  // in two steps. (Apart from the op events: waking does nothing else, so
  // it needs no place in their order.)
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<int64_t>> flow_wakeups_;
  std::vector<Flow> flows_;
  std::vector<int> active_;      // indices into flows_
  std::vector<int> done_flows_;  // the event loop's scratch: their ops
  // ReshareFlows' scratch: the active flows' paths and their rates.
  std::vector<const std::vector<int>*> active_paths_;
  std::vector<double> rates_;
  bool flows_changed_ = false;
  int64_t flows_since_ = 0;
  std::vector<double> link_bytes_;
  // Per link: the time with at least one flow on it. Each span it is busy
  // adds its end and takes away its start (whole ns: exact), so the total
  // is complete once the links are idle again.
  std::vector<int64_t> link_busy_;
  std::vector<int> link_flows_;  // active flows per link
  void AddLinkFlow(int link, int64_t now) {
    if (link_flows_[link]++ == 0) link_busy_[link] -= now;
  }
  void RemoveLinkFlow(int link, int64_t now) {
    if (--link_flows_[link] == 0) link_busy_[link] += now;
  }
  int finished_ = 0;
  int64_t processed_ = 0;
};

namespace {

// The global index of the last of a device's `streams` (name, global index)
// named `name` (names are unique on a valid schedule's device), or -1.
// Stream names are a few characters: compared inline, not by memcmp.
int FindStream(const std::vector<std::pair<absl::string_view, int>>& streams,
               absl::string_view name) {
  for (auto it = streams.rbegin(); it != streams.rend(); ++it) {
    const absl::string_view candidate = it->first;
    if (candidate.size() != name.size()) continue;
    size_t k = 0;
    while (k < name.size() && candidate[k] == name[k]) ++k;
    if (k == name.size()) return it->second;
  }
  return -1;
}

}  // namespace

absl::Status Simulator::Engine::Prepare() {
  const int n = schedule_->ops_size();
  ops_.assign(n, OpState());
  // Lowered schedules number their ops 0, 1, 2, ...: `dense`.
  bool dense = true;
  int flow_count = 0;  // at most: one per copy, one per edge of a collective's plan
  streams_.resize(schedule_->devices_size());
  for (auto& device_streams : streams_) device_streams.clear();
  int stream_count = 0;
  stream_names_.clear();
  for (const ScheduleDevice& d : schedule_->devices()) {
    for (const Stream& st : d.streams()) {
      streams_[d.id()].emplace_back(st.name(), stream_count++);
      stream_names_.push_back(&st.name());
    }
  }
  last_on_stream_.assign(stream_count, -1);
  wake_ns_.clear();
  signal_ns_.clear();
  transfer_cpu_ns_.assign(schedule_->devices_size(), 0);
  transfer_cpu_ns_per_byte_.assign(schedule_->devices_size(), 0);
  interrupt_ns_.assign(schedule_->devices_size(), 0);
  for (int d = 0; d < schedule_->devices_size(); ++d) {
    const Device& device = schedule_->cluster().devices(costs_->ClusterIndex(d));
    wake_ns_.push_back(static_cast<int64_t>(std::llround(device.stream_wake_latency_s() * 1e9)));
    signal_ns_.push_back(static_cast<int64_t>(std::llround(device.stream_signal_cost_s() * 1e9)));
    if (!device.shares_host_cores()) continue;
    transfer_cpu_ns_[d] = device.transfer_cpu_s() * 1e9;
    if (device.transfer_cpu_gbps() > 0) transfer_cpu_ns_per_byte_[d] = 1 / device.transfer_cpu_gbps();
    interrupt_ns_[d] = std::llround(device.interrupt_cpu_s() * 1e9);
  }
  wakes_cost_ = std::any_of(wake_ns_.begin(), wake_ns_.end(), [](int64_t ns) { return ns > 0; }) ||
                std::any_of(signal_ns_.begin(), signal_ns_.end(), [](int64_t ns) { return ns > 0; });
  // Successor counts, then the successors in the same order as before: each
  // op's next op on its stream, then its edges in schedule order.
  next_on_stream_.assign(n, -1);
  prev_on_stream_.assign(n, -1);
  const int cluster_devices = schedule_->cluster().devices_size();
  h2d_paths_.assign(cluster_devices, Path());
  d2h_paths_.assign(cluster_devices, Path());
  host_paths_built_.assign(cluster_devices, false);
  d2d_paths_.clear();
  d2d_path_of_.assign(cluster_devices * cluster_devices, -1);
  collective_routes_.clear();
  collective_route_of_.clear();
  collectives_.clear();
  instance_of_.clear();
  for (int i = 0; i < n; ++i) {
    // Each op's stream name lives in a string of its own, read below: ask
    // for it a few ops ahead, so that the misses overlap.
    if (i + 4 < n) __builtin_prefetch(&schedule_->ops(i + 4).stream());
    const Op& op = schedule_->ops(i);
    dense &= op.id() == i;
    if (op.device() < 0 || op.device() >= schedule_->devices_size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("op %d '%s': no device %d", op.id(), op.name(), op.device()));
    }
    const int stream = FindStream(streams_[op.device()], op.stream());
    if (stream < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "op %d '%s': device %d has no stream '%s'", op.id(), op.name(), op.device(),
          op.stream()));
    }
    OpState& s = ops_[i];
    s.device = op.device();
    s.stream = stream;
    if (last_on_stream_[stream] >= 0) {
      next_on_stream_[last_on_stream_[stream]] = i;
      prev_on_stream_[i] = last_on_stream_[stream];
      ++s.deps_left;
    }
    last_on_stream_[stream] = i;
    const int cluster_device = costs_->ClusterIndex(op.device());
    if (op.has_copy() && !host_paths_built_[cluster_device]) {
      h2d_paths_[cluster_device] = network_->HostToDevice(cluster_device);
      d2h_paths_[cluster_device] = network_->DeviceToHost(cluster_device);
      host_paths_built_[cluster_device] = true;
    }
    if (op.has_compute()) {
      s.is_compute = true;
      ASSIGN_OR_RETURN(const int64_t ns, costs_->ComputeNs(op));
      s.work_left = ns;
    } else if (op.has_copy()) {
      const CopyOp& c = op.copy();
      s.copy_bytes = c.bytes();
      ++flow_count;
      switch (c.direction()) {
        case HOST_TO_DEVICE:
          s.path = &h2d_paths_[cluster_device];
          break;
        case DEVICE_TO_HOST:
          s.path = &d2h_paths_[cluster_device];
          break;
        default: {
          if (c.peer_device() < 0 || c.peer_device() >= schedule_->devices_size()) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "op %d '%s': no peer device %d", op.id(), op.name(), c.peer_device()));
          }
          ASSIGN_OR_RETURN(s.path, PeerPath(cluster_device, costs_->ClusterIndex(c.peer_device())));
        }
      }
    } else if (op.has_collective()) {
      auto [it, inserted] = instance_of_.emplace(op.collective().key(), collectives_.size());
      if (inserted) {
        collectives_.emplace_back();
        CollectiveInstance& instance = collectives_.back();
        ASSIGN_OR_RETURN(instance.route, RouteOf(op));
        instance.ops.reserve(op.collective().participants_size());
        flow_count += instance.route->paths.size();
      }
      s.collective = it->second;
      collectives_[it->second].ops.push_back(i);
    } else {
      return absl::InvalidArgumentError(
          absl::StrFormat("op %d '%s' has no kind", op.id(), op.name()));
    }
  }
  flows_.clear();
  flows_.reserve(flow_count);
  active_.clear();
  // Op ids -> indices: `dense` ones are their own; any other numbering goes
  // through a map.
  dense_ids_ = dense;
  absl::flat_hash_map<int64_t, int> index_of;
  if (!dense) {
    index_of.reserve(n);
    for (int i = 0; i < n; ++i) index_of[schedule_->ops(i).id()] = i;
  }
  auto find_index = [&](int64_t id) -> int {
    if (dense) return id >= 0 && id < n ? static_cast<int>(id) : -1;
    auto it = index_of.find(id);
    return it == index_of.end() ? -1 : it->second;
  };
  successor_begin_.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) successor_begin_[i + 1] += next_on_stream_[i] >= 0;
  // The edges' op indices (their ids first: reading the Edge messages in a
  // loop of their own lets their cache misses overlap).
  edges_.resize(schedule_->edges_size());
  for (int e = 0; e < schedule_->edges_size(); ++e) {
    edges_[e] = {schedule_->edges(e).from(), schedule_->edges(e).to()};
  }
  for (int e = 0; e < schedule_->edges_size(); ++e) {
    const int from = find_index(edges_[e].first), to = find_index(edges_[e].second);
    if (from < 0 || to < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "edge %d (%d -> %d) names an op that does not exist", e, edges_[e].first,
          edges_[e].second));
    }
    edges_[e] = {from, to};
    ++successor_begin_[from + 1];
    ++ops_[to].deps_left;
  }
  for (int i = 0; i < n; ++i) successor_begin_[i + 1] += successor_begin_[i];
  successors_.assign(successor_begin_[n], 0);
  fill_.assign(successor_begin_.begin(), successor_begin_.end() - 1);
  for (int i = 0; i < n; ++i) {
    if (next_on_stream_[i] >= 0) successors_[fill_[i]++] = next_on_stream_[i];
  }
  for (const auto& [from, to] : edges_) successors_[fill_[from]++] = to;
  computing_.resize(schedule_->devices_size());
  for (std::vector<int>& running : computing_) running.clear();
  events_.Clear();
  sharing_.Reset(LinkCapacities(*network_));
  flows_changed_ = false;
  flows_since_ = 0;
  link_bytes_.assign(network_->links().size(), 0);
  link_busy_.assign(network_->links().size(), 0);
  link_flows_.assign(network_->links().size(), 0);
  finished_ = 0;
  processed_ = 0;
  return absl::OkStatus();
}

absl::StatusOr<const Path*> Simulator::Engine::PeerPath(int from, int to) {
  int& index = d2d_path_of_[from * schedule_->cluster().devices_size() + to];
  if (index < 0) {
    ASSIGN_OR_RETURN(Path path, network_->DeviceToDevice(from, to));
    index = d2d_paths_.size();
    d2d_paths_.push_back(std::move(path));
  }
  return &d2d_paths_[index];
}

absl::StatusOr<const CollectiveRoute*> Simulator::Engine::RouteOf(const Op& op) {
  const CollectiveOp& c = op.collective();
  const CollectiveRoute*& route = collective_route_of_[{
      c.kind(), c.bytes(), absl::MakeConstSpan(c.participants().data(), c.participants_size())}];
  if (route == nullptr) {
    CollectiveRoute built;
    ASSIGN_OR_RETURN(built.plan, costs_->Collective(op, *network_));
    built.paths.reserve(built.plan.edges.size());
    for (const auto& [from, to] : built.plan.edges) {
      ASSIGN_OR_RETURN(const Path* path,
                       PeerPath(costs_->ClusterIndex(from), costs_->ClusterIndex(to)));
      built.paths.push_back(path);
    }
    collective_routes_.push_back(std::move(built));
    route = &collective_routes_.back();
  }
  return route;
}

void Simulator::Engine::Ready(int op, int64_t now) {
  const int instance = ops_[op].collective;
  if (instance < 0) {
    Start(op, now);
    return;
  }
  CollectiveInstance& c = collectives_[instance];
  if (++c.arrived < static_cast<int>(c.ops.size())) return;
  for (int member : c.ops) {
    ops_[member].start = now;
    SetCommActive(ops_[member].device, +1, now);
    TakeTransferCpu(member, schedule_->ops(member).collective().bytes(), now);
    WakeToStart(member, now);
  }
  const int first = c.ops[0];
  if (c.route->plan.measured) {
    Push(now + c.route->plan.measured_ns, EventType::kOpEnd, first);
  } else if (c.route->plan.latency_ns > 0) {
    Push(now + c.route->plan.latency_ns, EventType::kLatencyDone, first);
  } else {
    StartFlows(first, now);
  }
}

void Simulator::Engine::Start(int op, int64_t now) {
  OpState& s = ops_[op];
  s.start = now;
  if (!IsComm(op)) {
    s.speed = 1;
    s.work_since = now;
    if (speed_.Constant(s.device)) {
      // The common case (a GPU): nothing changes its speed, so nothing
      // retimes it and it need not be in computing_.
      ++s.version;
      Push(now + static_cast<int64_t>(std::ceil(s.work_left - 1e-9)), EventType::kOpEnd, op,
           s.version);
      return;
    }
    computing_[s.device].push_back(op);
    speed_.ComputeStarted(s.device);
    RetimeGroup(s.device, now);  // this op, and its core-sharing neighbours
    return;
  }
  SetCommActive(s.device, +1, now);
  TakeTransferCpu(op, s.copy_bytes, now);
  WakeToStart(op, now);
  if (s.path->latency_ns > 0) {
    Push(now + s.path->latency_ns, EventType::kLatencyDone, op);
  } else {
    StartFlows(op, now);
  }
}

void Simulator::Engine::StartFlows(int op, int64_t now) {
  OpState& s = ops_[op];
  const CollectiveRoute* route = s.collective >= 0 ? collectives_[s.collective].route : nullptr;
  const double bytes = route != nullptr ? route->plan.flow_bytes : s.copy_bytes;
  const Path* const* paths = route != nullptr ? route->paths.data() : &s.path;
  const int count = route != nullptr ? route->paths.size() : 1;
  s.parts_left = count;
  for (int p = 0; p < count; ++p) {
    if (bytes <= 0) {
      --s.parts_left;
      continue;
    }
    Flow flow;
    flow.op = op;
    flow.links = &paths[p]->links;
    flow.remaining = bytes;
    flows_.push_back(flow);
    active_.push_back(flows_.size() - 1);
    for (int l : paths[p]->links) AddLinkFlow(l, now);
  }
  flows_changed_ = true;
  if (s.parts_left == 0) Finish(op, now);
}

void Simulator::Engine::Finish(int op, int64_t now) {
  const int instance = ops_[op].collective;
  const int* members = instance >= 0 ? collectives_[instance].ops.data() : &op;
  const int count = instance >= 0 ? collectives_[instance].ops.size() : 1;
  for (int k = 0; k < count; ++k) {
    const int m = members[k];
    OpState& s = ops_[m];
    s.end = now;
    ++finished_;
    if (IsComm(m)) {
      SetCommActive(s.device, -1, now);
      InterruptCompute(m, now);
    } else if (!speed_.Constant(s.device)) {
      auto& running = computing_[s.device];
      running.erase(std::find(running.begin(), running.end(), m));
      if (speed_.ComputeEnded(s.device)) RetimeGroup(s.device, now);
    }
  }
  for (int k = 0; k < count; ++k) {
    const int m = members[k];
    if (!wakes_cost_) {
      for (int j = successor_begin_[m]; j < successor_begin_[m + 1]; ++j) {
        const int next = successors_[j];
        if (--ops_[next].deps_left == 0) Ready(next, now);
      }
      continue;
    }
    // A stream asleep on this op's end is woken: it starts its wake-up
    // latency later, and waking it costs this op's stream its signalling
    // cost before its next op. A stream still busy finds the event
    // recorded when it gets there: neither applies.
    bool wakes = false;
    for (int j = successor_begin_[m]; j < successor_begin_[m + 1]; ++j) {
      wakes |= ops_[successors_[j]].stream != ops_[m].stream && Asleep(successors_[j]);
    }
    // The wake-up call runs on the waking thread's core: on the testbed a
    // core that other devices may be computing on.
    const int device = ops_[m].device;
    if (wakes && signal_ns_[device] > 0 && speed_.SignalCpuChanged(device, !IsComm(m), +1)) {
      RetimeGroup(device, now);
      Push(now + signal_ns_[device], EventType::kSignalCpuDone, m);
    }
    for (int j = successor_begin_[m]; j < successor_begin_[m + 1]; ++j) {
      const int next = successors_[j];
      int64_t delay = 0;
      if (ops_[next].stream != ops_[m].stream) {
        delay = Asleep(next) ? wake_ns_[ops_[next].device] : 0;
      } else if (wakes) {
        delay = signal_ns_[ops_[m].device];
      }
      if (delay > 0) {
        Push(now + delay, EventType::kWokenUp, next);
      } else if (--ops_[next].deps_left == 0) {
        Ready(next, now);
      }
    }
  }
}

void Simulator::Engine::TakeTransferCpu(int op, double bytes, int64_t now) {
  const int device = ops_[op].device;
  const double cpu_ns = transfer_cpu_ns_[device] + bytes * transfer_cpu_ns_per_byte_[device];
  if (cpu_ns <= 0 || !speed_.TransferCpuChanged(device, +1)) return;
  RetimeGroup(device, now);
  Push(now + static_cast<int64_t>(std::ceil(cpu_ns - 1e-9)), EventType::kTransferCpuDone, op);
}

void Simulator::Engine::InterruptCompute(int op, int64_t now) {
  const int device = ops_[op].device;
  if (interrupt_ns_[device] <= 0 || !speed_.ComputesOnTransferCore(device)) return;
  speed_.TransferCpuChanged(device, +1);
  RetimeGroup(device, now);
  Push(now + interrupt_ns_[device], EventType::kTransferCpuDone, op);
}

void Simulator::Engine::SetCommActive(int device, int delta, int64_t now) {
  if (speed_.CommChanged(device, delta)) Retime(device, now);
}

void Simulator::Engine::Retime(int device, int64_t now) {
  const double speed = speed_.Speed(device);
  for (int op : computing_[device]) {
    OpState& s = ops_[op];
    s.work_left -= (now - s.work_since) * s.speed;
    s.work_since = now;
    if (s.speed == speed && s.version > 0) continue;  // its end event stands
    s.speed = speed;
    ++s.version;
    if (speed <= 0) continue;  // stalled: the next retime schedules its end
    Push(now + static_cast<int64_t>(std::ceil(std::max(0.0, s.work_left) / s.speed - 1e-9)),
         EventType::kOpEnd, op, s.version);
  }
}

void Simulator::Engine::RetimeGroup(int device, int64_t now) {
  for (int d : speed_.CoreMates(device)) Retime(d, now);
}

void Simulator::Engine::AdvanceFlows(int64_t now) {
  const int64_t dt = now - flows_since_;
  flows_since_ = now;
  if (dt <= 0) return;
  for (int f : active_) {
    Flow& flow = flows_[f];
    const double moved = flow.rate * dt;
    flow.remaining -= moved;
    for (int l : *flow.links) link_bytes_[l] += moved;
  }
}

void Simulator::Engine::ReshareFlows(int64_t now) {
  active_paths_.clear();
  for (int f : active_) active_paths_.push_back(flows_[f].links);
  sharing_.Share(active_paths_, &rates_);
  int64_t queued = -1;  // the last wake-up queued here
  for (size_t i = 0; i < active_.size(); ++i) {
    Flow& flow = flows_[active_[i]];
    flow.rate = rates_[i];
    const double ns = flow.remaining / flow.rate;
    const int64_t end = now + static_cast<int64_t>(std::ceil(std::max(0.0, ns) - 1e-6));
    // A second wake-up at the same time would change nothing: not for it,
    // nor for the flows before it that end then too (a collective's ring
    // edges, flows of equal size and share).
    if (end == flow.end_wakeup) continue;
    flow.end_wakeup = end;
    if (end == queued) continue;
    queued = end;
    flow_wakeups_.push(end);
  }
  flows_changed_ = false;
}

absl::Status Simulator::Engine::Run(const Schedule& schedule, const Network& network,
                                    const CostModel& costs, ComputeSpeed speed,
                                    SimResult* result) {
  schedule_ = &schedule;
  network_ = &network;
  costs_ = &costs;
  speed_ = std::move(speed);
  RETURN_IF_ERROR(Prepare());
  events_.Reserve(4 * ops_.size());  // room for the events in flight
  for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
    if (ops_[i].deps_left == 0) Ready(i, 0);
  }
  if (flows_changed_) ReshareFlows(0);
  int64_t now = 0;
  while (!events_.empty() || !flow_wakeups_.empty()) {
    now = events_.empty()         ? flow_wakeups_.top()
          : flow_wakeups_.empty() ? events_.top().time
                                  : std::min(events_.top().time, flow_wakeups_.top());
    AdvanceFlows(now);
    while (!events_.empty() && events_.top().time == now) {
      const EventPayload e = events_.top().payload;
      events_.Pop();
      ++processed_;
      switch (e.type) {
        case EventType::kOpEnd:
          if (ops_[e.index].collective < 0 && ops_[e.index].version != e.version) break;
          Finish(e.index, now);
          break;
        case EventType::kLatencyDone:
          StartFlows(e.index, now);
          break;
        case EventType::kWokenUp:
          if (--ops_[e.index].deps_left == 0) Ready(e.index, now);
          break;
        case EventType::kTransferCpuDone:
          speed_.TransferCpuChanged(ops_[e.index].device, -1);
          RetimeGroup(ops_[e.index].device, now);
          break;
        case EventType::kSignalCpuDone:
          speed_.SignalCpuChanged(ops_[e.index].device, !IsComm(e.index), -1);
          RetimeGroup(ops_[e.index].device, now);
          break;
      }
    }
    while (!flow_wakeups_.empty() && flow_wakeups_.top() == now) {
      flow_wakeups_.pop();
      ++processed_;
    }
    // Flows done by now (their end, or a tie with it).
    done_flows_.clear();
    for (size_t i = 0; i < active_.size();) {
      Flow& flow = flows_[active_[i]];
      if (flow.remaining <= 1e-6 * std::max(1.0, flow.rate)) {
        done_flows_.push_back(flow.op);
        for (int l : *flow.links) RemoveLinkFlow(l, now);
        active_[i] = active_.back();
        active_.pop_back();
        flows_changed_ = true;
      } else {
        ++i;
      }
    }
    for (int op : done_flows_) {
      if (--ops_[op].parts_left == 0) Finish(op, now);
    }
    if (flows_changed_) ReshareFlows(now);
  }

  if (finished_ != static_cast<int>(ops_.size())) {
    std::vector<std::string> stuck;
    for (int i = 0; i < static_cast<int>(ops_.size()) && stuck.size() < 3; ++i) {
      if (ops_[i].end < 0) {
        stuck.push_back(absl::StrFormat("op %d '%s'", schedule_->ops(i).id(),
                                        schedule_->ops(i).name()));
      }
    }
    return absl::FailedPreconditionError(absl::StrFormat(
        "the schedule cannot finish: %d of %d ops never ran (first: %s); run "
        "ValidateSchedule to find the cycle or the collective a participant "
        "never reaches",
        ops_.size() - finished_, ops_.size(), absl::StrJoin(stuck, ", ")));
  }

  Report(result);
  return absl::OkStatus();
}

void Simulator::Engine::Report(SimResult* result) const {
  result->events = processed_;
  Timeline& t = result->timeline;
  t.Clear();  // keeps its op intervals for reuse
  t.set_source(PREDICTED);
  t.set_producer("zosched sim");
  t.set_schedule_name(schedule_->name());
  t.set_cluster_name(schedule_->cluster().name());
  // The step ends with its last op. (Not at the last event: an end event
  // a retimed compute op left behind, or a transfer's CPU ending after its
  // copy, may come later and does nothing.)
  int64_t end = 0;
  for (const OpState& s : ops_) end = std::max(end, s.end);
  StepInterval* step = t.add_steps();
  step->set_step(0);
  step->set_start_ns(0);
  step->set_end_ns(end);
  t.mutable_ops()->Reserve(ops_.size());
  for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
    OpInterval* o = t.add_ops();
    o->set_op_id(dense_ids_ ? i : schedule_->ops(i).id());
    o->set_device(ops_[i].device);
    *o->mutable_stream() = *stream_names_[ops_[i].stream];  // in place: cheaper than set_stream
    o->set_step(0);
    o->set_start_ns(ops_[i].start);
    o->set_end_ns(ops_[i].end);
  }
  const std::vector<SimLink>& links = network_->links();
  result->links.resize(links.size());
  for (size_t l = 0; l < links.size(); ++l) {
    LinkUsage& u = result->links[l];
    u.name = links[l].name;
    u.link_class = links[l].link_class;
    u.capacity_gbps = links[l].capacity;
    u.bytes = link_bytes_[l];
    u.busy_ns = link_busy_[l];
    u.utilisation = end > 0 ? link_bytes_[l] / (links[l].capacity * end) : 0;
  }
}

Simulator::Simulator() : engine_(std::make_unique<Engine>()) {}

Simulator::~Simulator() = default;

absl::Status Simulator::Simulate(const Schedule& schedule, SimResult* result) {
  ASSIGN_OR_RETURN(Network network, Network::Build(schedule.cluster()));
  ASSIGN_OR_RETURN(CostModel costs, CostModel::Build(schedule));
  std::vector<int> cluster_index;
  for (int d = 0; d < schedule.devices_size(); ++d) cluster_index.push_back(costs.ClusterIndex(d));
  ASSIGN_OR_RETURN(ComputeSpeed speed, ComputeSpeed::Build(schedule, cluster_index));
  return engine_->Run(schedule, network, costs, std::move(speed), result);
}

absl::StatusOr<SimResult> Simulate(const Schedule& schedule) {
  Simulator simulator;
  SimResult result;
  RETURN_IF_ERROR(simulator.Simulate(schedule, &result));
  return result;
}

}  // namespace zosched
