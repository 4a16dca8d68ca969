// One schedule's figures over the rounds of predict_vs_measure --rounds. On a
// machine whose speed drifts (the CPU testbed: a VM whose cores slow by
// 30-75 % for seconds at a time, and whose calibrations drift with them),
// one calibrate -> predict -> run cycle per schedule measures the machine
// as much as the model: the same schedule's error moved by 5-15 points from
// one full run to the next. Each round calibrates, predicts and runs every
// schedule anew (the rounds in turn over the whole set, so that one busy
// spell lands on one round of several schedules rather than on every round
// of one), and the table reports, per figure, the median over the rounds:
// the rounds are never chosen by their outcome.
//
// Units: ms for step times, signed fractions for errors ((predicted -
// measured) / measured), fractions in [0, 1] for overlap, ns for exposed
// communication.
#pragma once

#include <cstdint>
#include <vector>

#include "experiments/breakdown_target.h"
#include "experiments/testbed_cycle.h"

namespace zosched {

struct RoundsMedian {
  int rounds = 0;
  double predicted_ms = 0, measured_ms = 0;
  // The fastest and slowest measured step of any round.
  double measured_min_ms = 0, measured_max_ms = 0;
  double error = 0;  // the median of the rounds' errors, not of a ratio of medians
  Breakdown predicted, measured;
  // The predictions again from each run (CycleResult), their steps and
  // breakdowns: with the cores' speed during the run, and with the run's
  // own compute costs; `has_*` false when no round made one (GPUs). Over
  // the rounds that made one.
  bool has_probed = false, has_run_costs = false;
  double probed_ms = 0, probed_error = 0;
  double run_costs_ms = 0, run_costs_error = 0;
  Breakdown probed, run_costs;
  // Runs made over all rounds (a round runs again while its machine was
  // unsteady: experiments/steady_machine.h), and the largest core drift and
  // calibration spread of the runs the rounds kept (fractions).
  int runs = 0;
  double largest_drift = 0, largest_spread = 0;
  // How well the rounds' measurements agree among themselves, by the
  // breakdown's own targets: whether every round's measured overlap, and
  // every round's measured exposed communication, is within the target of
  // `measured` (their median), as if it were a prediction of it. A
  // prediction can be checked against the medians only as finely as the
  // machine repeats them; both true for a single round.
  BreakdownCheck rounds_agree;
};

// The medians (base/median.h: for an even count the upper middle value, one
// that was measured) over `rounds`, each one round's kept result of one
// schedule. `rounds` must not be empty.
RoundsMedian MedianOverRounds(const std::vector<CycleResult>& rounds);

// Where round `round` (1, 2, ...) of the schedule labelled `label` keeps
// its files, as a CycleCase label (a path under the output directory):
// `label` for the first, "LABEL/roundN" after it.
std::string RoundLabel(const std::string& label, int round);

}  // namespace zosched
