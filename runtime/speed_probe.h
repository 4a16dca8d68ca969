// How fast the calling thread's core computes right now: a fixed piece of
// the CPU testbed's own compute work, timed in the thread's CPU time. The
// work is what a block's forward op does: one decoder block of opt-tiny
// (hidden 64, 4 heads, FFN 256) perturbed out of place by the normal
// generator, then run over 4 examples of 32 tokens with the testbed's
// kernels (runtime/nn/decoder_forward.h): about 0.3 ms on the 2-core
// development VM. calibrate times it on each core beside the op shapes
// (Device.speed_probe_s) and train --speed_probe_every times it between
// steps (Timeline.speed_probes); their ratio is how much faster or slower
// the core was during the run than at calibration, which a VM's cores
// change by tens of per cent for seconds at a time. Because the work is
// fixed and the same in both, the ratio measures the machine, not the ops:
// a prediction scaled by it still tests the calibrated op costs.
//
// Why the ops' own kernels: a slow spell of a virtual core (its host's SMT
// sibling busy) slows different instruction mixes differently. A GEMM and
// normals that fit in L2 ran 1.19x slower in a spell in which the op shapes
// ran 1.30x slower; the block forward moves with the ops (1.3-1.4x).
#pragma once

#include <cstdint>
#include <vector>

#include "models/model.pb.h"

namespace zosched {

class SpeedProbe {
 public:
  SpeedProbe();

  // Runs the work once untimed (its operands into this core's caches, as
  // the ops' are when they run) and twice timed; returns the lesser of the
  // timed runs' CPU times on the calling thread in ns (> 0). Time slices
  // other threads get on the core meanwhile do not count, but what being
  // interrupted costs the work does (~40 us of a 0.3 ms run on the
  // development VM, in about one probe in two of a run where the
  // transfer threads wake between steps): the lesser run is the
  // undisturbed one.
  int64_t CpuNs();

 private:
  void Work();

  ModelSpec spec_;
  std::vector<float> block_, perturbed_, hidden_, workspace_;
  std::vector<int32_t> lengths_;
};

}  // namespace zosched
