// Sleeps that end when they are due. Linux lets a sleeping thread wake up
// to its timer slack late, 50 µs by default: every throttled copy of the
// CPU testbed (runtime/link_throttle.h) would then end some 50-60 µs after
// the time it was due, a delay the simulator does not model and which
// grows with the number of copies.
#pragma once

namespace zosched {

// Sets the calling thread's timer slack to 1 µs (prctl PR_SET_TIMERSLACK);
// threads it starts afterwards inherit it. Best effort: without the call's
// support sleeps keep the default slack.
void UsePreciseSleeps();

}  // namespace zosched
