#include "runtime/host_store_layout.h"

namespace zosched {

HostStoreLayout LayOutHostStore(const Schedule& schedule, const std::string& host) {
  constexpr int64_t kAlign = 64;
  HostStoreLayout layout;
  layout.offset.assign(schedule.buffers_size(), -1);
  for (int i = 0; i < schedule.buffers_size(); ++i) {
    const Buffer& b = schedule.buffers(i);
    if (b.device() >= 0 || b.host() != host) continue;
    layout.offset[i] = layout.bytes;
    layout.bytes += (b.size_bytes() + kAlign - 1) / kAlign * kAlign;
  }
  return layout;
}

}  // namespace zosched
