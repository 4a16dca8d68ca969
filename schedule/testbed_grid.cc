#include "schedule/testbed_grid.h"

namespace zosched {

const std::vector<StrategyGrid>& TestbedGrids() {
  static const auto* grids = new std::vector<StrategyGrid>{
      {ZO2},
      {DISTZO2, 2, 1, /*slicing=*/true},
      {DISTZO2, 2, 1, /*slicing=*/false},
      {DISTZO2, 1, 2, /*slicing=*/true},
      {DISTZO2, 1, 2, /*slicing=*/false},
      {DISTZO2, 2, 2, /*slicing=*/true},
      {DISTZO2, 2, 2, /*slicing=*/false},
  };
  return *grids;
}

}  // namespace zosched
