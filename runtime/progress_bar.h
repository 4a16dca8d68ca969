// A training run's progress on stdout (rank 0): on a terminal one line
// redrawn in place,
//   step 12/100 [##......] loss 0.6931  5120 tokens/s  ETA 0m03s
// elsewhere (a log file, mpirun's pipe) the same as one plain line per
// update. At most 5 updates a second, and always the last step's: on the
// testbed each line wakes mpirun and the launcher, which take the cores
// the ranks compute on (about 5 % of a core at 150 steps a second).
#pragma once

#include <chrono>

namespace zosched {

class ProgressBar {
 public:
  // A run of steps first_step..steps-1, timed from now (the ETA assumes
  // the steps left take as long as the average so far).
  ProgressBar(int first_step, int steps);

  // Step `step` has finished with mean loss `loss` (nats) at `tokens_per_s`.
  void StepDone(int step, double loss, double tokens_per_s);

  // Ends the bar's line on a terminal, before other output (nothing
  // elsewhere: each update ended its own line).
  static void EndLine();

 private:
  const int first_step_, steps_;
  const std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_shown_{};
};

}  // namespace zosched
