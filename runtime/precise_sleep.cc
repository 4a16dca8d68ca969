#include "runtime/precise_sleep.h"

#include <sys/prctl.h>

namespace zosched {

void UsePreciseSleeps() {
  constexpr unsigned long kSlackNs = 1000;
  prctl(PR_SET_TIMERSLACK, kSlackNs, 0, 0, 0);
}

}  // namespace zosched
