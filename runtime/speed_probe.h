// How fast the calling thread's core computes right now: a fixed piece of
// the CPU testbed's compute work (a block GEMM and a run of the normal
// generator, about 0.2 ms on the 2-core development VM), timed in the
// thread's CPU time. calibrate times it on each core beside the op shapes
// (Device.speed_probe_s) and train --speed_probe_every times it between steps
// (Timeline.speed_probes); their ratio is how much faster or slower the
// core was during the run than at calibration, which a VM's cores change by
// tens of per cent for seconds at a time. Because the work is fixed and
// the same in both, the ratio measures the machine, not the ops: a
// prediction scaled by it still tests the calibrated op costs.
#pragma once

#include <cstdint>
#include <vector>

namespace zosched {

class SpeedProbe {
 public:
  SpeedProbe();

  // Runs the work once untimed (its operands into this core's caches, as
  // the ops' are when they run) and once timed; returns the timed run's
  // CPU time on the calling thread in ns (> 0). Time slices other threads
  // get on the core meanwhile do not count.
  int64_t CpuNs();

 private:
  void Work();

  std::vector<float> a_, b_, c_, z_;
};

}  // namespace zosched
