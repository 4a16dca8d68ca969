// The expected latest of several arrival times that vary independently:
// a collective starts when its last member arrives, and when each member's
// arrival varies (its compute ops' times do from step to step), the last
// arrives later on average than the latest typical arrival. Each arrival
// is taken as normal, N(mean, sd²); the maximum of two is moment-matched
// to a normal (C. E. Clark, "The greatest of a finite set of random
// variables", Operations Research 9(2), 1961) and folded in one arrival at
// a time. Exact for two; for n identical ones within 1 % of the exact
// expected maximum up to n = 8 (1.0294 sd above the mean for 4, Clark
// 1.0286).
#pragma once

#include <vector>

namespace zosched {

struct Arrival {
  double mean = 0;  // any unit, e.g. ns
  double sd = 0;    // the same unit, >= 0
};

// The expected maximum of `arrivals` (their largest mean when every sd is
// 0; 0 for none).
double ExpectedMaximum(const std::vector<Arrival>& arrivals);

}  // namespace zosched
