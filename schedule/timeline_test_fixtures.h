// What the tests of timelines, and of the schedules they time, build their
// inputs from: messages parsed from textproto, and schedules whose devices
// are given by their streams.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/textproto.h"
#include "gtest/gtest.h"
#include "schedule/schedule.pb.h"

namespace zosched {

// `text` parsed as a Message (a Schedule, a Timeline, an OpInterval...). A
// text that does not parse fails the current test with the parser's message.
template <typename Message>
Message ParseOrFail(absl::string_view text) {
  Message message;
  const absl::Status status = ParseTextProto(std::string(text), "inline", &message);
  EXPECT_TRUE(status.ok()) << status;
  return message;
}

// The streams of one schedule device, in order, by kind; each is named as
// its kind in lower case: "compute", "h2d", "d2h", "collective", "peer".
using StreamKinds = std::vector<StreamKind>;

// A schedule of devices 0, 1, ... on cluster devices "gpu0", "gpu1", ...,
// device d with the streams streams[d], and the fields of `rest` (a Schedule
// textproto without devices: name, cluster, buffers, ops, edges...) merged
// in. A `rest` that does not parse fails the current test.
Schedule ScheduleWithDevices(const std::vector<StreamKinds>& streams, absl::string_view rest);

// Whether `text` contains `part`.
bool Contains(absl::string_view text, absl::string_view part);

}  // namespace zosched
