// The strategy grids the CPU testbed measures: the schedules whose compute
// op shapes calibrate times, that predict_vs_measure predicts and runs, and
// of which the quickstart and the GPU calibration take theirs.
#pragma once

#include <vector>

#include "schedule/strategy_grid.h"

namespace zosched {

// zo2, then distzo2 P2xD1, P1xD2 and P2xD2, each sliced then naive (7 grids,
// in this order; the testbed's 4 devices hold the largest).
const std::vector<StrategyGrid>& TestbedGrids();

}  // namespace zosched
