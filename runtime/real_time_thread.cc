#include "runtime/real_time_thread.h"

#include <sched.h>

namespace zosched {

void SetCallerRealTime(bool real_time) {
  sched_param param{};
  param.sched_priority = real_time ? 1 : 0;
  sched_setscheduler(0, real_time ? SCHED_FIFO : SCHED_OTHER, &param);
}

}  // namespace zosched
