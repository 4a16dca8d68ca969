// Predicted versus measured: matching two Timelines of one Schedule op by
// op (by op id) and reporting how far the prediction is off.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule/schedule.pb.h"
#include "schedule/timeline.pb.h"

namespace zosched {

struct StreamError {
  int device = 0;
  std::string stream;
  int64_t predicted_busy_ns = 0;  // |union of the stream's op intervals|
  int64_t measured_busy_ns = 0;   // the same, median (lower, as for step
                                  // time) over the measured steps
  double error = 0;               // (predicted - measured) / measured; 0 when
                                  // measured is 0
};

struct TimelineComparison {
  int64_t predicted_step_ns = 0;
  // Median step time over the measured steps (all of them; drop warm-up
  // steps from the Timeline before comparing), and the min and max. For an
  // even number of steps the median is the lower of the two middle values
  // (an actual step time, never an average).
  int64_t measured_step_ns = 0;
  int64_t measured_min_step_ns = 0;
  int64_t measured_max_step_ns = 0;
  int measured_steps = 0;
  // Median (the lower middle) time from one measured step's start to the
  // next's, over consecutively numbered steps: the time per step a run
  // sees, gaps between steps included (0 with no two consecutive steps).
  int64_t measured_period_ns = 0;
  double step_error = 0;  // (predicted - measured) / measured; 0 when
                          // measured is 0
  // Every (device, stream) of the schedule, by device, then stream order,
  // including streams without ops (busy 0).
  std::vector<StreamError> streams;
};

// Compares step 0 of `predicted` with every step of `measured` (other
// predicted steps are ignored). A step's time is its StepInterval if the
// timeline has one, else max end - min start of its ops. The measured steps
// are the step numbers of its ops and of its StepIntervals.
//
// Errors: InvalidArgument naming the first op id present in one timeline's
// steps but not the other's, and the measured step (each measured step must
// hold exactly the op ids of predicted step 0); a timeline with no ops, or a
// predicted timeline without step 0; an op id the schedule lacks, an op on
// another device or stream than the schedule's, an op twice in one step, an
// interval that ends before it starts, or two StepIntervals for one step.
absl::StatusOr<TimelineComparison> CompareTimelines(const Schedule& schedule,
                                                    const Timeline& predicted,
                                                    const Timeline& measured);

}  // namespace zosched
