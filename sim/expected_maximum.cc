#include "sim/expected_maximum.h"

#include <algorithm>
#include <cmath>

namespace zosched {
namespace {

// The standard normal density and distribution function.
double Density(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }
double Distribution(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// max(a, b) as a normal with its first two moments (Clark's formulas).
Arrival Greater(const Arrival& a, const Arrival& b) {
  const double theta = std::sqrt(a.sd * a.sd + b.sd * b.sd);
  if (theta == 0) return {std::max(a.mean, b.mean), 0};
  const double alpha = (a.mean - b.mean) / theta;
  const double pa = Distribution(alpha), pb = Distribution(-alpha), d = Density(alpha);
  const double mean = a.mean * pa + b.mean * pb + theta * d;
  const double second = (a.mean * a.mean + a.sd * a.sd) * pa +
                        (b.mean * b.mean + b.sd * b.sd) * pb + (a.mean + b.mean) * theta * d;
  return {mean, std::sqrt(std::max(0.0, second - mean * mean))};
}

}  // namespace

double ExpectedMaximum(const std::vector<Arrival>& arrivals) {
  if (arrivals.empty()) return 0;
  Arrival latest = arrivals.front();
  for (size_t i = 1; i < arrivals.size(); ++i) latest = Greater(latest, arrivals[i]);
  return latest.mean;
}

}  // namespace zosched
