// A strategy on its device grid (ZO: mezo, zo2, distzo2 P x D sliced or
// naive; first-order: D devices): the names the tools give it and the
// LowerOptions it starts from.
#pragma once

#include <string>

#include "schedule/lower_options.h"
#include "schedule/schedule.pb.h"

namespace zosched {

struct StrategyGrid {
  StrategyKind strategy = STRATEGY_KIND_UNSPECIFIED;
  int pertp = 1;        // DISTZO2: P, the perturbation-parallel devices
  int dp = 1;           // DISTZO2: D, the data-parallel devices; first-order: the devices
  bool slicing = true;  // DISTZO2: sliced (true) or naive blocks
};

// The strategy in lower case, and for DISTZO2 its grid: "zo2", "mezo",
// "distzo2_P2xD1".
std::string GridName(const StrategyGrid& grid);

// GridName, and for DISTZO2 its communication scheme: "zo2",
// "distzo2_P2xD1_sliced", "distzo2_P1xD2_naive".
std::string GridSchemeName(const StrategyGrid& grid);

// LowerOptions with `grid`'s strategy, P, D and slicing, and the default
// training settings (DefaultTrainingSettings); every other knob its default.
LowerOptions GridLowerOptions(const StrategyGrid& grid);

}  // namespace zosched
