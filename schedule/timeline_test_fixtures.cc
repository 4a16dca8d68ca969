#include "schedule/timeline_test_fixtures.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace zosched {

Schedule ScheduleWithDevices(const std::vector<StreamKinds>& streams, absl::string_view rest) {
  Schedule schedule;
  for (size_t d = 0; d < streams.size(); ++d) {
    ScheduleDevice* device = schedule.add_devices();
    device->set_id(static_cast<int32_t>(d));
    device->set_cluster_device(absl::StrCat("gpu", d));
    for (const StreamKind kind : streams[d]) {
      Stream* stream = device->add_streams();
      stream->set_name(absl::AsciiStrToLower(StreamKind_Name(kind)));
      stream->set_kind(kind);
    }
  }
  schedule.MergeFrom(ParseOrFail<Schedule>(rest));
  return schedule;
}

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

}  // namespace zosched
