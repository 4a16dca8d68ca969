#include "sim/op_graph.h"

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"

namespace zosched {
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

// Asks for every cache line of `object` (not what it points to).
template <typename T>
void PrefetchObject(const T& object) {
  constexpr uintptr_t kLine = 64;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(&object);
  for (uintptr_t line = begin & ~(kLine - 1); line < begin + sizeof(T); line += kLine) {
    __builtin_prefetch(reinterpret_cast<const void*>(line));
  }
}

}  // namespace

void OpGraph::Reset(const Schedule& schedule) {
  schedule_ = &schedule;
  streams_.resize(schedule.devices_size());
  for (auto& device_streams : streams_) device_streams.clear();
  int stream_count = 0;
  stream_names_.clear();
  for (const ScheduleDevice& d : schedule.devices()) {
    for (const Stream& st : d.streams()) {
      streams_[d.id()].emplace_back(st.name(), stream_count++);
      stream_names_.push_back(&st.name());
    }
  }
  last_on_stream_.assign(stream_count, -1);
  const int n = schedule.ops_size();
  // Place sets every op's device, stream, stream predecessor and first
  // dependencies.
  device_.resize(n);
  stream_.resize(n);
  dependencies_.resize(n);
  prev_on_stream_.resize(n);
  next_on_stream_.assign(n, -1);
  dense_ids_ = true;
}

absl::Status OpGraph::Place(int i, const Op& op) {
  // The ops' messages miss the cache, and each op's stream name, read
  // below, lives in a string of its own whose address is in the op: ask for
  // the op eight ahead and the stream name of the op four ahead (by then at
  // hand), so that the misses overlap.
  if (i + 8 < size()) PrefetchObject(schedule_->ops(i + 8));
  if (i + 4 < size()) __builtin_prefetch(&schedule_->ops(i + 4).stream());
  dense_ids_ &= op.id() == i;
  const bool has_device = op.device() >= 0 && op.device() < schedule_->devices_size();
  const int stream = has_device ? FindStream(streams_[op.device()], op.stream()) : -1;
  if (stream < 0) return Unplaceable(op);
  device_[i] = op.device();
  stream_[i] = stream;
  const int previous = last_on_stream_[stream];
  prev_on_stream_[i] = previous;
  dependencies_[i] = previous >= 0;
  if (previous >= 0) next_on_stream_[previous] = i;
  last_on_stream_[stream] = i;
  return absl::OkStatus();
}

absl::Status OpGraph::Unplaceable(const Op& op) const {
  if (op.device() < 0 || op.device() >= schedule_->devices_size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("op %d '%s': no device %d", op.id(), op.name(), op.device()));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "op %d '%s': device %d has no stream '%s'", op.id(), op.name(), op.device(), op.stream()));
}

absl::Status OpGraph::Link() {
  const int n = size();
  // Op ids -> indices: dense ones are their own; any other numbering goes
  // through a map.
  absl::flat_hash_map<int64_t, int> index_of;
  if (!dense_ids_) {
    index_of.reserve(n);
    for (int i = 0; i < n; ++i) index_of[schedule_->ops(i).id()] = i;
  }
  auto index = [&](int64_t id) -> int64_t {
    if (dense_ids_) return id;
    auto it = index_of.find(id);
    return it == index_of.end() ? -1 : it->second;
  };
  // Successor counts, then the successors in order.
  successor_begin_.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) successor_begin_[i + 1] += next_on_stream_[i] >= 0;
  // The edges' op indices (their ids first: reading the Edge messages in a
  // loop of their own lets their cache misses overlap).
  edges_.resize(schedule_->edges_size());
  for (int e = 0; e < schedule_->edges_size(); ++e) {
    edges_[e] = {schedule_->edges(e).from(), schedule_->edges(e).to()};
  }
  for (int e = 0; e < schedule_->edges_size(); ++e) {
    const int64_t from = index(edges_[e].first), to = index(edges_[e].second);
    if (from < 0 || from >= n || to < 0 || to >= n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "edge %d (%d -> %d) names an op that does not exist", e, edges_[e].first,
          edges_[e].second));
    }
    edges_[e] = {from, to};
    ++successor_begin_[from + 1];
    ++dependencies_[to];
  }
  for (int i = 0; i < n; ++i) successor_begin_[i + 1] += successor_begin_[i];
  successors_.resize(successor_begin_[n]);  // every one filled below
  fill_.assign(successor_begin_.begin(), successor_begin_.end() - 1);
  for (int i = 0; i < n; ++i) {
    if (next_on_stream_[i] >= 0) successors_[fill_[i]++] = next_on_stream_[i];
  }
  for (const auto& [from, to] : edges_) successors_[fill_[from]++] = to;
  return absl::OkStatus();
}

}  // namespace zosched
