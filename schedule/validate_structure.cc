#include "schedule/validate_structure.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/check.h"
#include "base/status_format.h"
#include "base/status_macros.h"
#include "schedule/cluster_lookup.h"
#include "schedule/describe_op.h"

namespace zosched {
namespace {

// "[0, 1]".
template <typename Range>
std::string List(const Range& items) {
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

double Gb(int64_t bytes) { return static_cast<double>(bytes) / 1e9; }

bool IsPeerCopy(const Op& op) {
  return op.has_copy() && op.copy().direction() == DEVICE_TO_DEVICE;
}

// One op's read or write of bytes [offset, end) of a buffer.
struct Access {
  int64_t offset;
  int64_t end;
  int op;  // index in Schedule.ops
  bool write;
};

// What the reference checks resolve, for the later rules.
struct Index {
  // Op.id -> index in ops, unless every op's id is its index (as lowering
  // numbers them), which needs no map.
  bool ids_are_indices = false;
  absl::flat_hash_map<int64_t, int> op_by_id;
  absl::flat_hash_map<absl::string_view, int> buffer_by_name;
  std::vector<int64_t> buffer_size;  // per buffer
  std::vector<int> lane_of_op;  // dense (device, stream) index of each op
  int num_lanes = 0;
  std::vector<std::pair<int, int>> edge_ops;  // Schedule.edges as op indices
  // Per buffer: its reads and writes, sorted by (offset, op).
  std::vector<std::vector<Access>> accesses;
};

// The happens-before DAG: one node per op, except that the ops of one
// collective share a node. Arcs remember the ops they connect.
struct Graph {
  struct Arc {
    int from_op;
    int to_op;
    int edge;  // index in Schedule.edges, or -1 for stream order
  };
  int num_nodes = 0;
  std::vector<int> node_of_op;
  std::vector<Arc> arcs;
  // Arcs out of node v: out_arcs[out_begin[v] .. out_begin[v + 1]).
  std::vector<int> out_begin;
  std::vector<int> out_arcs;
  std::vector<int> topo_order;  // filled by CheckAcyclic
};

// to[l] = max(to[l], from[l]) for l < n, n a multiple of four: unrolled by
// four so that the compiler merges each four into vector instructions.
void MaxInto(int* __restrict to, const int* __restrict from, int n) {
  for (int l = 0; l < n; l += 4) {
    to[l] = std::max(to[l], from[l]);
    to[l + 1] = std::max(to[l + 1], from[l + 1]);
    to[l + 2] = std::max(to[l + 2], from[l + 2]);
    to[l + 3] = std::max(to[l + 3], from[l + 3]);
  }
}

// Happens-before as vector clocks. The ops of a lane are totally ordered, so
// each node keeps, per lane, the position (in lane order) of the last op of
// that lane that happens strictly before it; rows are filled in topological
// order. Before(u, v) iff node u happens strictly before node v: iff an op
// of u (any one: all of a node's ops run together) is at or before v's
// entry for its lane.
class HappensBefore {
 public:
  HappensBefore(const Graph& g, const Index& index)
      : stride_((index.num_lanes + 3) / 4 * 4),
        lane_of_node_(g.num_nodes),
        position_of_node_(g.num_nodes),
        clock_(new int[static_cast<size_t>(g.num_nodes) * stride_]) {
    CHECK(static_cast<int>(g.topo_order.size()) == g.num_nodes);
    const int n = static_cast<int>(g.node_of_op.size());
    // A node's own ops, as (lane, position) pairs: node v's are
    // own[own_begin[v] .. own_begin[v + 1]).
    std::vector<int> own_begin(g.num_nodes + 1, 0);
    for (int i = 0; i < n; ++i) ++own_begin[g.node_of_op[i] + 1];
    for (int v = 0; v < g.num_nodes; ++v) own_begin[v + 1] += own_begin[v];
    std::vector<std::pair<int, int>> own(n);
    std::vector<int> next(own_begin.begin(), own_begin.end() - 1);
    std::vector<int> lane_length(index.num_lanes, 0);
    for (int i = 0; i < n; ++i) {
      const int v = g.node_of_op[i], lane = index.lane_of_op[i];
      own[next[v]++] = {lane, lane_length[lane]};
      lane_of_node_[v] = lane;
      position_of_node_[v] = lane_length[lane]++;
    }
    // A row is written by the first arc into its node (a copy) and merged
    // with by the others; a node without arcs into it has every entry -1.
    std::vector<char> reached(g.num_nodes, 0);
    std::vector<int> through(stride_);  // u's clock with u's own ops
    for (int u : g.topo_order) {
      if (!reached[u]) std::fill(Row(u), Row(u) + stride_, -1);
      std::copy(Row(u), Row(u) + stride_, through.begin());
      for (int k = own_begin[u]; k < own_begin[u + 1]; ++k) {
        through[own[k].first] = std::max(through[own[k].first], own[k].second);
      }
      for (int k = g.out_begin[u]; k < g.out_begin[u + 1]; ++k) {
        const int v = g.node_of_op[g.arcs[g.out_arcs[k]].to_op];
        int* to = Row(v);
        if (!reached[v]) {
          std::copy(through.begin(), through.end(), to);
          reached[v] = 1;
          continue;
        }
        MaxInto(to, through.data(), stride_);
      }
    }
  }

  bool Before(int u, int v) const {
    return position_of_node_[u] <= Row(v)[lane_of_node_[u]];
  }

 private:
  int* Row(int v) { return clock_.get() + static_cast<size_t>(v) * stride_; }
  const int* Row(int v) const { return clock_.get() + static_cast<size_t>(v) * stride_; }

  int stride_;  // a row's entries: the lanes, padded to a multiple of four
  std::vector<int> lane_of_node_;      // the lane of one op of each node
  std::vector<int> position_of_node_;  // that op's position in its lane
  std::unique_ptr<int[]> clock_;       // node-major, -1 where no op of the lane
};

// ---------------------------------------------------------------------------
// Rule 1: references.

// The index in Schedule.ops of the op with id `id`, or -1.
int OpIndex(const Schedule& s, const Index& index, int64_t id) {
  if (index.ids_are_indices) return id >= 0 && id < s.ops_size() ? static_cast<int>(id) : -1;
  auto it = index.op_by_id.find(id);
  return it == index.op_by_id.end() ? -1 : it->second;
}

// The name of an op's field in messages: `field`, or `field[element]` for
// an element of a repeated field (element >= 0).
std::string FieldName(absl::string_view field, int element) {
  return element < 0 ? std::string(field) : absl::StrCat(field, "[", element, "]");
}

// Whether `range` lies inside a buffer of `size` bytes.
bool Inside(const BufferRange& range, int64_t size) {
  const int64_t offset = range.offset_bytes();
  return offset >= 0 && range.size_bytes() > 0 && offset <= size &&
         range.size_bytes() <= size - offset;
}

// The error CheckRange returns for `range`.
absl::Status RangeError(const Schedule& s, const Index& index, const Op& op,
                        absl::string_view field, int element, const BufferRange& range) {
  auto it = index.buffer_by_name.find(range.buffer());
  if (it == index.buffer_by_name.end()) {
    return InvalidArgument("%s: %s names buffer '%s', which does not exist",
                   DescribeOp(op), FieldName(field, element), range.buffer());
  }
  const int64_t size = s.buffers(it->second).size_bytes();
  return InvalidArgument(
      "%s: %s (offset %d, size %d) lies outside buffer '%s' of %d bytes "
      "(need offset >= 0, size > 0, offset + size <= %d)",
      DescribeOp(op), FieldName(field, element), range.offset_bytes(), range.size_bytes(),
      range.buffer(), size, size);
}

// Checks one BufferRange of `op` (field `field`, element `element` of it when
// >= 0: see FieldName) and returns its buffer's index.
absl::Status CheckRange(const Schedule& s, const Index& index, const Op& op,
                        absl::string_view field, int element, const BufferRange& range,
                        int* buffer) {
  auto it = index.buffer_by_name.find(range.buffer());
  if (it == index.buffer_by_name.end() ||
      !Inside(range, index.buffer_size[it->second])) {
    return RangeError(s, index, op, field, element, range);
  }
  *buffer = it->second;
  return absl::OkStatus();
}

// Device ids and their cluster devices; fills the stream lanes of each device.
absl::Status CheckDevices(
    const Schedule& s, Index* index,
    std::vector<absl::flat_hash_map<absl::string_view, int>>* lanes) {
  const Cluster& cluster = s.cluster();
  absl::flat_hash_map<absl::string_view, int> cluster_devices;
  std::vector<std::string> names;
  for (const Device& d : cluster.devices()) {
    cluster_devices.emplace(d.name(), -1);
    names.push_back(d.name());
  }
  lanes->resize(s.devices_size());
  for (int d = 0; d < s.devices_size(); ++d) {
    const ScheduleDevice& device = s.devices(d);
    if (device.id() != d) {
      return InvalidArgument("devices[%d] has id %d; device ids must be 0..%d in order",
                     d, device.id(), s.devices_size() - 1);
    }
    auto it = cluster_devices.find(device.cluster_device());
    if (it == cluster_devices.end()) {
      return InvalidArgument(
          "device %d: cluster_device '%s' is not a device of cluster '%s' "
          "(it has %s)",
          d, device.cluster_device(), cluster.name(), List(names));
    }
    if (it->second >= 0) {
      return InvalidArgument(
          "device %d: cluster device '%s' is already device %d (each cluster "
          "device backs at most one schedule device)",
          d, device.cluster_device(), it->second);
    }
    it->second = d;
    for (const Stream& stream : device.streams()) {
      if (!(*lanes)[d].emplace(stream.name(), index->num_lanes).second) {
        return InvalidArgument(
            "device %d: stream '%s' is declared twice (stream names "
            "are unique per device)",
            d, stream.name());
      }
      ++index->num_lanes;
    }
  }
  return absl::OkStatus();
}

// Buffer names, sizes and locations.
absl::Status CheckBuffers(const Schedule& s, Index* index) {
  absl::flat_hash_map<absl::string_view, int> hosts;
  std::vector<std::string> host_names;
  for (const Host& h : s.cluster().hosts()) {
    hosts.emplace(h.name(), 0);
    host_names.push_back(h.name());
  }
  for (int b = 0; b < s.buffers_size(); ++b) {
    const Buffer& buffer = s.buffers(b);
    if (buffer.name().empty()) return InvalidArgument("buffers[%d] has no name", b);
    auto [it, inserted] = index->buffer_by_name.emplace(buffer.name(), b);
    if (!inserted) {
      return InvalidArgument(
          "buffers[%d] and buffers[%d] are both named '%s' (buffer "
          "names are unique)",
          it->second, b, buffer.name());
    }
    if (buffer.size_bytes() < 0) {
      return InvalidArgument("buffer '%s' has size_bytes %d (must be >= 0)",
                     buffer.name(), buffer.size_bytes());
    }
    if (buffer.device() == -1) {
      if (!hosts.contains(buffer.host())) {
        return InvalidArgument(
            "buffer '%s' is in host memory (device -1) of host '%s', which is "
            "not a host of cluster '%s' (it has %s)",
            buffer.name(), buffer.host(), s.cluster().name(), List(host_names));
      }
    } else if (buffer.device() < 0 || buffer.device() >= s.devices_size()) {
      return InvalidArgument(
          "buffer '%s' is on device %d, which does not exist (the schedule has "
          "%d devices; -1 means host memory)",
          buffer.name(), buffer.device(), s.devices_size());
    }
  }
  index->buffer_size.reserve(s.buffers_size());
  for (const Buffer& buffer : s.buffers()) index->buffer_size.push_back(buffer.size_bytes());
  index->accesses.resize(s.buffers_size());
  return absl::OkStatus();
}

// Op ids, devices, streams and buffer ranges; records reads and writes.
absl::Status CheckOps(
    const Schedule& s,
    const std::vector<absl::flat_hash_map<absl::string_view, int>>& lanes,
    Index* index) {
  index->lane_of_op.reserve(s.ops_size());
  index->ids_are_indices = true;
  for (int i = 0; i < s.ops_size() && index->ids_are_indices; ++i) {
    index->ids_are_indices = s.ops(i).id() == i;
  }
  if (!index->ids_are_indices) index->op_by_id.reserve(s.ops_size());
  for (int i = 0; i < s.ops_size(); ++i) {
    const Op& op = s.ops(i);
    if (!index->ids_are_indices) {
      auto [it, inserted] = index->op_by_id.emplace(op.id(), i);
      if (!inserted) {
        return InvalidArgument("%s and %s have the same id %d (op ids are unique)",
                               DescribeOp(s.ops(it->second)), DescribeOp(op), op.id());
      }
    }
    if (op.device() < 0 || op.device() >= s.devices_size()) {
      return InvalidArgument(
          "%s: device %d does not exist (the schedule has %d "
          "devices)",
          DescribeOp(op), op.device(), s.devices_size());
    }
    const auto& device_lanes = lanes[op.device()];
    auto lane = device_lanes.find(op.stream());
    if (lane == device_lanes.end()) {
      std::vector<std::string> names;
      for (const Stream& stream : s.devices(op.device()).streams()) {
        names.push_back(stream.name());
      }
      return InvalidArgument("%s: device %d has no stream '%s' (it has %s)",
                     DescribeOp(op), op.device(), op.stream(), List(names));
    }
    index->lane_of_op.push_back(lane->second);
    int b;
    for (int r = 0; r < op.reads_size(); ++r) {
      const BufferRange& range = op.reads(r);
      RETURN_IF_ERROR(
          CheckRange(s, *index, op, "reads", r, range, &b));
      index->accesses[b].push_back(
          {range.offset_bytes(), range.offset_bytes() + range.size_bytes(), i,
           /*write=*/false});
    }
    for (int w = 0; w < op.writes_size(); ++w) {
      const BufferRange& range = op.writes(w);
      RETURN_IF_ERROR(CheckRange(s, *index, op, "writes", w, range, &b));
      index->accesses[b].push_back(
          {range.offset_bytes(), range.offset_bytes() + range.size_bytes(), i,
           /*write=*/true});
    }
    if (op.has_copy()) {
      const CopyOp& copy = op.copy();
      if (copy.has_src()) {
        RETURN_IF_ERROR(CheckRange(s, *index, op, "copy.src", -1, copy.src(), &b));
      }
      if (copy.has_dst()) {
        RETURN_IF_ERROR(CheckRange(s, *index, op, "copy.dst", -1, copy.dst(), &b));
      }
      if (copy.direction() == DEVICE_TO_DEVICE &&
          (copy.peer_device() < 0 || copy.peer_device() >= s.devices_size())) {
        return InvalidArgument(
            "%s: peer_device %d does not exist (the schedule has %d "
            "devices)",
            DescribeOp(op), copy.peer_device(), s.devices_size());
      }
    }
    if (op.has_collective()) {
      const CollectiveOp& c = op.collective();
      if (c.has_send()) {
        RETURN_IF_ERROR(
            CheckRange(s, *index, op, "collective.send", -1, c.send(), &b));
      }
      if (c.has_recv()) {
        RETURN_IF_ERROR(
            CheckRange(s, *index, op, "collective.recv", -1, c.recv(), &b));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckEdges(const Schedule& s, Index* index) {
  index->edge_ops.reserve(s.edges_size());
  for (int e = 0; e < s.edges_size(); ++e) {
    const int from = OpIndex(s, *index, s.edges(e).from());
    if (from < 0) {
      return InvalidArgument("edge %d: 'from' op %d does not exist", e,
                     s.edges(e).from());
    }
    const int to = OpIndex(s, *index, s.edges(e).to());
    if (to < 0) {
      return InvalidArgument("edge %d: 'to' op %d does not exist", e, s.edges(e).to());
    }
    index->edge_ops.emplace_back(from, to);
  }
  return absl::OkStatus();
}

absl::Status CheckReferences(const Schedule& s, Index* index) {
  std::vector<absl::flat_hash_map<absl::string_view, int>> lanes;
  RETURN_IF_ERROR(CheckDevices(s, index, &lanes));
  RETURN_IF_ERROR(CheckBuffers(s, index));
  RETURN_IF_ERROR(CheckOps(s, lanes, index));
  RETURN_IF_ERROR(CheckEdges(s, index));
  for (std::vector<Access>& accesses : index->accesses) {
    std::sort(accesses.begin(), accesses.end(),
              [](const Access& a, const Access& b) {
                return std::tie(a.offset, a.op, a.write) <
                       std::tie(b.offset, b.op, b.write);
              });
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Rule 2: edges across devices.

absl::Status CheckCrossDeviceEdges(const Schedule& s, const Index& index) {
  for (int e = 0; e < s.edges_size(); ++e) {
    const Op& from = s.ops(index.edge_ops[e].first);
    const Op& to = s.ops(index.edge_ops[e].second);
    if (from.device() != to.device() && !IsPeerCopy(from) && !IsPeerCopy(to)) {
      return InvalidArgument(
          "edge %d: %s -> %s crosses devices; only a DEVICE_TO_DEVICE copy may "
          "be ordered against another device's ops (devices otherwise "
          "interact through collectives)",
          e, DescribeOp(from), DescribeOp(to));
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Rule 3: collectives. Fills `groups` with the op indices of each key, keys in
// order of first appearance.

absl::Status CheckCollectives(const Schedule& s,
                              std::vector<std::vector<int>>* groups) {
  const int num_devices = s.devices_size();
  absl::flat_hash_map<absl::string_view, int> group_of_key;
  std::vector<int> seen(num_devices, -1);  // scratch: op index per device
  for (int i = 0; i < s.ops_size(); ++i) {
    const Op& op = s.ops(i);
    if (!op.has_collective()) continue;
    const CollectiveOp& c = op.collective();
    if (c.key().empty()) {
      return InvalidArgument(
          "%s: collective has an empty key (the ops of one "
          "collective share a key)",
          DescribeOp(op));
    }
    bool own_device = false;
    for (int p : c.participants()) {
      if (p < 0 || p >= num_devices) {
        return InvalidArgument(
            "%s: collective '%s' lists participant %d, which is not "
            "a device (the schedule has %d devices)",
            DescribeOp(op), c.key(), p, num_devices);
      }
      if (seen[p] == i) {
        return InvalidArgument(
            "%s: collective '%s' lists device %d twice in its "
            "participants %s",
            DescribeOp(op), c.key(), p, List(c.participants()));
      }
      seen[p] = i;
      own_device |= p == op.device();
    }
    if (!own_device) {
      return InvalidArgument(
          "%s: collective '%s' has participants %s, which do not "
          "include its own device %d",
          DescribeOp(op), c.key(), List(c.participants()), op.device());
    }
    auto [it, inserted] =
        group_of_key.emplace(c.key(), static_cast<int>(groups->size()));
    if (inserted) groups->emplace_back();
    (*groups)[it->second].push_back(i);
  }
  std::fill(seen.begin(), seen.end(), -1);
  for (const std::vector<int>& group : *groups) {
    const Op& first = s.ops(group[0]);
    const CollectiveOp& ref = first.collective();
    for (int i : group) {
      const Op& op = s.ops(i);
      const CollectiveOp& c = op.collective();
      const bool same_participants =
          std::equal(c.participants().begin(), c.participants().end(),
                     ref.participants().begin(), ref.participants().end());
      if (c.kind() != ref.kind() || !same_participants ||
          c.bytes() != ref.bytes()) {
        return InvalidArgument(
            "collective '%s': %s has kind %s, participants %s, bytes %d but %s "
            "has kind %s, participants %s, bytes %d; all ops of a collective "
            "agree on kind, participants (same devices, same order) and bytes",
            c.key(), DescribeOp(op), CollectiveKind_Name(c.kind()),
            List(c.participants()), c.bytes(), DescribeOp(first),
            CollectiveKind_Name(ref.kind()), List(ref.participants()),
            ref.bytes());
      }
      if (seen[op.device()] >= 0) {
        return InvalidArgument(
            "collective '%s': device %d has two ops with this key, "
            "%s and %s (each participant has exactly one)",
            c.key(), op.device(), DescribeOp(s.ops(seen[op.device()])),
            DescribeOp(op));
      }
      seen[op.device()] = i;
    }
    for (int p : ref.participants()) {
      if (seen[p] < 0) {
        return InvalidArgument(
            "collective '%s' (participants %s): device %d has no op with this "
            "key, so %s would wait for it forever (a deadlock)",
            ref.key(), List(ref.participants()), p, DescribeOp(first));
      }
    }
    for (int i : group) seen[s.ops(i).device()] = -1;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Rule 4: cycles.

Graph BuildGraph(const Schedule& s, const Index& index,
                 const std::vector<std::vector<int>>& groups) {
  Graph g;
  const int n = s.ops_size();
  g.node_of_op.assign(n, -1);
  for (const std::vector<int>& group : groups) {
    for (int i : group) g.node_of_op[i] = g.num_nodes;
    ++g.num_nodes;
  }
  for (int i = 0; i < n; ++i) {
    if (g.node_of_op[i] < 0) g.node_of_op[i] = g.num_nodes++;
  }
  g.arcs.reserve(n + s.edges_size());
  std::vector<int> last_on_lane(index.num_lanes, -1);
  for (int i = 0; i < n; ++i) {
    int& last = last_on_lane[index.lane_of_op[i]];
    if (last >= 0) g.arcs.push_back({last, i, -1});
    last = i;
  }
  for (int e = 0; e < s.edges_size(); ++e) {
    g.arcs.push_back({index.edge_ops[e].first, index.edge_ops[e].second, e});
  }
  // Arcs grouped by source node (counting sort).
  g.out_begin.assign(g.num_nodes + 1, 0);
  for (const Graph::Arc& a : g.arcs) ++g.out_begin[g.node_of_op[a.from_op] + 1];
  for (int v = 0; v < g.num_nodes; ++v) g.out_begin[v + 1] += g.out_begin[v];
  g.out_arcs.resize(g.arcs.size());
  std::vector<int> next(g.out_begin.begin(), g.out_begin.end() - 1);
  for (int k = 0; k < static_cast<int>(g.arcs.size()); ++k) {
    g.out_arcs[next[g.node_of_op[g.arcs[k].from_op]]++] = k;
  }
  return g;
}

// Formats the cycle given by `cycle` (arc indices, each arc's target node the
// next arc's source node): "op 3 '...' (...) -> op 4 '...' (...) -(edge 2)->
// op 3 '...' (...)". Sets *deadlock when the cycle passes through a
// collective from one participant's op to another's.
std::string FormatCycle(const Schedule& s, const Graph& g,
                        const std::vector<int>& cycle, bool* deadlock) {
  *deadlock = false;
  std::string out = DescribeOp(s.ops(g.arcs[cycle[0]].from_op));
  for (size_t k = 0; k < cycle.size(); ++k) {
    const Graph::Arc& arc = g.arcs[cycle[k]];
    if (k > 0 && arc.from_op != g.arcs[cycle[k - 1]].to_op) {
      absl::StrAppend(&out, ", which runs together with ",
                      DescribeOp(s.ops(arc.from_op)));
      *deadlock = true;
    }
    absl::StrAppend(
        &out,
        arc.edge < 0 ? " -> " : absl::StrCat(" -(edge ", arc.edge, ")-> "),
        DescribeOp(s.ops(arc.to_op)));
  }
  const int last_op = g.arcs[cycle.back()].to_op;
  const int first_op = g.arcs[cycle[0]].from_op;
  if (last_op != first_op) {
    absl::StrAppend(&out, ", which runs together with ",
                    DescribeOp(s.ops(first_op)));
    *deadlock = true;
  }
  return out;
}

// Kahn's algorithm; fills g->topo_order, or reports the ops on one cycle.
absl::Status CheckAcyclic(const Schedule& s, Graph* g) {
  std::vector<int> indegree(g->num_nodes, 0);
  for (const Graph::Arc& a : g->arcs) ++indegree[g->node_of_op[a.to_op]];
  g->topo_order.reserve(g->num_nodes);
  for (int v = 0; v < g->num_nodes; ++v) {
    if (indegree[v] == 0) g->topo_order.push_back(v);
  }
  for (size_t head = 0; head < g->topo_order.size(); ++head) {
    const int u = g->topo_order[head];
    for (int k = g->out_begin[u]; k < g->out_begin[u + 1]; ++k) {
      const int v = g->node_of_op[g->arcs[g->out_arcs[k]].to_op];
      if (--indegree[v] == 0) g->topo_order.push_back(v);
    }
  }
  if (static_cast<int>(g->topo_order.size()) == g->num_nodes) {
    return absl::OkStatus();
  }
  // Every node left has indegree > 0 from arcs out of nodes left: walk such
  // arcs backwards until a node repeats.
  std::vector<int> pred_arc(g->num_nodes, -1);
  for (int k = 0; k < static_cast<int>(g->arcs.size()); ++k) {
    const int u = g->node_of_op[g->arcs[k].from_op];
    const int v = g->node_of_op[g->arcs[k].to_op];
    if (indegree[u] > 0 && indegree[v] > 0 && pred_arc[v] < 0) pred_arc[v] = k;
  }
  int v = -1;
  for (int i = 0; i < s.ops_size() && v < 0; ++i) {
    if (indegree[g->node_of_op[i]] > 0) v = g->node_of_op[i];
  }
  CHECK(v >= 0);
  std::vector<int> position(g->num_nodes, -1);
  std::vector<int> path;  // arcs, walking backwards
  while (position[v] < 0) {
    position[v] = static_cast<int>(path.size());
    const int k = pred_arc[v];
    CHECK(k >= 0) << "node " << v << " is left by Kahn's algorithm without a "
                  << "predecessor left";
    path.push_back(k);
    v = g->node_of_op[g->arcs[k].from_op];
  }
  std::vector<int> cycle(path.begin() + position[v], path.end());
  std::reverse(cycle.begin(), cycle.end());
  // Start at the op that comes first in the schedule.
  auto first = std::min_element(cycle.begin(), cycle.end(), [&](int a, int b) {
    return g->arcs[a].from_op < g->arcs[b].from_op;
  });
  std::rotate(cycle.begin(), first, cycle.end());
  bool deadlock;
  std::string ops = FormatCycle(s, *g, cycle, &deadlock);
  return InvalidArgument(
      "happens-before cycle (-> is stream order, -(edge i)-> is edges[i]): "
      "%s%s",
      ops,
      deadlock ? "; the participants issue these collectives in different "
                 "orders, which deadlocks on real hardware"
               : "");
}

// ---------------------------------------------------------------------------
// Rules 5 and 6 first decide, per buffer and in linear time after a sort,
// whether the buffer has a problem at all (which is the common case to be
// fast for); only then do they search for the first problem in the order
// their messages promise, comparing accesses pairwise.

// One access restricted to one piece of its buffer. Cutting a buffer at
// every access's start and end leaves pieces whose bytes are all touched by
// the same accesses, so two accesses overlap iff they share a piece.
struct PieceAccess {
  int piece;  // index of the piece, in offset order
  int rank;   // position of the access's node in Graph::topo_order
  int node;
  bool write;
};

// The pieces of a buffer with accesses `accesses` (sorted by offset), each
// access once per piece it covers, sorted by (piece, rank, write): in a
// piece, an op's reads come before its writes and before every access of a
// node that comes later in topological order. `rank_of_node` inverts
// Graph::topo_order. Reuses `boundaries` and `keys` as storage.
void CutIntoPieces(const std::vector<Access>& accesses, const Graph& g,
                   const std::vector<int>& rank_of_node, std::vector<int64_t>* boundaries,
                   std::vector<uint64_t>* keys, std::vector<PieceAccess>* pieces) {
  boundaries->clear();
  for (const Access& a : accesses) {
    boundaries->push_back(a.offset);
    boundaries->push_back(a.end);
  }
  std::sort(boundaries->begin(), boundaries->end());
  boundaries->erase(std::unique(boundaries->begin(), boundaries->end()), boundaries->end());
  // Each piece access as one integer that sorts as (piece, rank, write);
  // the rank gives the node back.
  keys->clear();
  int first = 0;  // the piece an access starts at: accesses come by offset
  for (const Access& a : accesses) {
    const uint64_t rank = rank_of_node[g.node_of_op[a.op]];
    while ((*boundaries)[first] < a.offset) ++first;
    for (int p = first; (*boundaries)[p] < a.end; ++p) {
      keys->push_back(static_cast<uint64_t>(p) << 32 | rank << 1 | (a.write ? 1 : 0));
    }
  }
  std::sort(keys->begin(), keys->end());
  pieces->clear();
  pieces->reserve(keys->size());
  for (const uint64_t key : *keys) {
    const int rank = static_cast<int>((key & 0xffffffffu) >> 1);
    pieces->push_back({static_cast<int>(key >> 32), rank, g.topo_order[rank], (key & 1) != 0});
  }
}

// Per buffer, its accesses cut into pieces (CutIntoPieces).
std::vector<std::vector<PieceAccess>> PiecesOfBuffers(const Index& index, const Graph& g) {
  std::vector<int> rank_of_node(g.num_nodes);
  for (int k = 0; k < g.num_nodes; ++k) rank_of_node[g.topo_order[k]] = k;
  std::vector<std::vector<PieceAccess>> pieces(index.accesses.size());
  std::vector<int64_t> boundaries;
  std::vector<uint64_t> keys;
  for (size_t b = 0; b < index.accesses.size(); ++b) {
    CutIntoPieces(index.accesses[b], g, rank_of_node, &boundaries, &keys, &pieces[b]);
  }
  return pieces;
}

// ---------------------------------------------------------------------------
// Rule 5: reads before writes.

// Whether every read in `pieces` (one buffer's, from CutIntoPieces) has, in
// its piece, a write by an op that happens before it. Such a write comes
// earlier in topological order; the nearest one usually is the one.
bool EveryReadWritten(const std::vector<PieceAccess>& pieces, const HappensBefore& hb) {
  std::vector<int> writes;  // nodes writing the current piece so far, in rank order
  for (size_t k = 0; k < pieces.size(); ++k) {
    const PieceAccess& a = pieces[k];
    if (k == 0 || a.piece != pieces[k - 1].piece) writes.clear();
    if (a.write) {
      writes.push_back(a.node);
      continue;
    }
    bool written = false;
    for (auto w = writes.rbegin(); w != writes.rend() && !written; ++w) {
      written = hb.Before(*w, a.node);
    }
    if (!written) return false;
  }
  return true;
}

// Finds the first bytes of [offset, end) that no write in `accesses` (sorted
// by offset) by an op happening before `reader_node` covers. Returns false
// if every byte is covered.
bool FirstUnwritten(const std::vector<Access>& accesses, int64_t offset,
                    int64_t end, int reader_node, const Graph& g,
                    const HappensBefore& hb, int64_t* gap_begin,
                    int64_t* gap_end) {
  int64_t covered = offset;  // [offset, covered) is written
  for (const Access& a : accesses) {
    if (a.offset >= end) break;
    if (!a.write || a.end <= covered ||
        !hb.Before(g.node_of_op[a.op], reader_node)) {
      continue;
    }
    if (a.offset > covered) {
      *gap_begin = covered;
      *gap_end = a.offset;
      return true;
    }
    covered = a.end;
    if (covered >= end) return false;
  }
  *gap_begin = covered;
  *gap_end = end;
  return true;
}

// `pieces`: PiecesOfBuffers. Searches for the first unwritten read (in op
// order, then read order) only when some buffer has one.
absl::Status CheckReadsBeforeWrites(const Schedule& s, const Index& index, const Graph& g,
                                    const HappensBefore& hb,
                                    const std::vector<std::vector<PieceAccess>>& pieces) {
  bool all_written = true;
  for (int b = 0; b < s.buffers_size() && all_written; ++b) {
    all_written = s.buffers(b).persistent() || EveryReadWritten(pieces[b], hb);
  }
  if (all_written) return absl::OkStatus();
  for (int i = 0; i < s.ops_size(); ++i) {
    const Op& op = s.ops(i);
    for (const BufferRange& read : op.reads()) {
      const int b = index.buffer_by_name.find(read.buffer())->second;
      if (s.buffers(b).persistent()) continue;
      int64_t gap_begin, gap_end;
      if (FirstUnwritten(index.accesses[b], read.offset_bytes(),
                         read.offset_bytes() + read.size_bytes(),
                         g.node_of_op[i], g, hb, &gap_begin, &gap_end)) {
        return InvalidArgument(
            "%s reads bytes [%d, %d) of buffer '%s' before any op that happens "
            "before it writes them in this step; order a writer before it (an "
            "edge or stream order), or declare the buffer persistent if it "
            "carries state across steps",
            DescribeOp(op), gap_begin, gap_end, read.buffer());
      }
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Rule 6: races.

// Whether no two accesses in `pieces` (one buffer's, from CutIntoPieces)
// race. In each piece, in topological order: every write happens after the
// piece's previous write, and every read after the previous write and before
// the next one; by transitivity that orders every pair with a write.
bool RaceFree(const std::vector<PieceAccess>& pieces, const HappensBefore& hb) {
  auto ordered = [&hb](int u, int v) { return u == v || hb.Before(u, v); };
  int last_write = -1;     // node
  std::vector<int> reads;  // nodes reading the piece since last_write
  for (size_t k = 0; k < pieces.size(); ++k) {
    const PieceAccess& a = pieces[k];
    if (k == 0 || a.piece != pieces[k - 1].piece) {
      last_write = -1;
      reads.clear();
    }
    if (last_write >= 0 && !ordered(last_write, a.node)) return false;
    if (!a.write) {
      reads.push_back(a.node);
      continue;
    }
    for (int r : reads) {
      if (!ordered(r, a.node)) return false;
    }
    reads.clear();
    last_write = a.node;
  }
  return true;
}

// `pieces`: PiecesOfBuffers. Searches a buffer with a race for its first
// one, sweeping its accesses in offset order and comparing each with the
// later ones that start before it ends.
absl::Status CheckRaces(const Schedule& s, const Index& index, const Graph& g,
                        const HappensBefore& hb,
                        const std::vector<std::vector<PieceAccess>>& pieces) {
  for (int b = 0; b < s.buffers_size(); ++b) {
    if (RaceFree(pieces[b], hb)) continue;
    const std::vector<Access>& acc = index.accesses[b];
    for (size_t i = 0; i < acc.size(); ++i) {
      for (size_t j = i + 1; j < acc.size() && acc[j].offset < acc[i].end;
           ++j) {
        if (!acc[i].write && !acc[j].write) continue;
        const int u = g.node_of_op[acc[i].op];
        const int v = g.node_of_op[acc[j].op];
        if (u == v || hb.Before(u, v) || hb.Before(v, u)) continue;
        const Access& x = acc[i].op < acc[j].op ? acc[i] : acc[j];
        const Access& y = acc[i].op < acc[j].op ? acc[j] : acc[i];
        return InvalidArgument(
            "race on bytes [%d, %d) of buffer '%s': %s %s them and %s %s them, "
            "and neither happens before the other; order them with an edge "
            "(or put them on one stream)",
            std::max(x.offset, y.offset), std::min(x.end, y.end),
            s.buffers(b).name(), DescribeOp(s.ops(x.op)),
            x.write ? "writes" : "reads", DescribeOp(s.ops(y.op)),
            y.write ? "writes" : "reads");
      }
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Rule 7: memory plan.

// Checks that `buffers` (indices) fit in `capacity_bytes`; `place` names the
// device or host at the head of the message.
absl::Status CheckFits(const Schedule& s, const std::string& place,
                       std::vector<int> buffers, int64_t capacity_bytes) {
  int64_t needed = 0;
  for (int b : buffers) {
    const int64_t size = s.buffers(b).size_bytes();
    needed = size > std::numeric_limits<int64_t>::max() - needed
                 ? std::numeric_limits<int64_t>::max()
                 : needed + size;
  }
  if (needed <= capacity_bytes) return absl::OkStatus();
  std::stable_sort(buffers.begin(), buffers.end(), [&](int a, int b) {
    return s.buffers(a).size_bytes() > s.buffers(b).size_bytes();
  });
  std::vector<std::string> largest;
  for (size_t k = 0; k < buffers.size() && k < 3; ++k) {
    const Buffer& buffer = s.buffers(buffers[k]);
    largest.push_back(absl::StrFormat("'%s' %.1f GB", buffer.name(),
                                      Gb(buffer.size_bytes())));
  }
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s: memory plan needs %.1f GB, capacity %.1f GB, over by %.1f GB (%d "
      "bytes); largest buffers: %s%s",
      place, Gb(needed), Gb(capacity_bytes), Gb(needed - capacity_bytes),
      needed - capacity_bytes, absl::StrJoin(largest, ", "),
      capacity_bytes == 0 ? " (the cluster gives no memory_bytes for it)"
                          : ""));
}

absl::Status CheckMemory(const Schedule& s) {
  std::vector<std::vector<int>> on_device(s.devices_size());
  absl::flat_hash_map<absl::string_view, std::vector<int>> on_host;
  for (int b = 0; b < s.buffers_size(); ++b) {
    const Buffer& buffer = s.buffers(b);
    if (buffer.device() >= 0) {
      on_device[buffer.device()].push_back(b);
    } else {
      on_host[buffer.host()].push_back(b);
    }
  }
  for (int d = 0; d < s.devices_size(); ++d) {
    const Device* device = FindDevice(s.cluster(), s.devices(d).cluster_device());
    CHECK(device != nullptr) << "rule 1 checked cluster_device";
    RETURN_IF_ERROR(CheckFits(s,
                              absl::StrFormat("device %d (%s, %s)", d,
                                              device->name(), device->model()),
                              on_device[d], device->memory_bytes()));
  }
  for (const Host& host : s.cluster().hosts()) {
    auto it = on_host.find(host.name());
    if (it == on_host.end()) continue;
    RETURN_IF_ERROR(CheckFits(s, absl::StrFormat("host '%s'", host.name()),
                              it->second, host.memory_bytes()));
    on_host.erase(it);  // a duplicate host name counts its buffers once
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateScheduleStructure(const Schedule& schedule) {
  Index index;
  RETURN_IF_ERROR(CheckReferences(schedule, &index));
  RETURN_IF_ERROR(CheckCrossDeviceEdges(schedule, index));
  std::vector<std::vector<int>> groups;
  RETURN_IF_ERROR(CheckCollectives(schedule, &groups));
  Graph graph = BuildGraph(schedule, index, groups);
  RETURN_IF_ERROR(CheckAcyclic(schedule, &graph));
  const HappensBefore hb(graph, index);
  const std::vector<std::vector<PieceAccess>> pieces = PiecesOfBuffers(index, graph);
  RETURN_IF_ERROR(CheckReadsBeforeWrites(schedule, index, graph, hb, pieces));
  RETURN_IF_ERROR(CheckRaces(schedule, index, graph, hb, pieces));
  return CheckMemory(schedule);
}

}  // namespace zosched
