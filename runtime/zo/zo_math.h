// Per-element MeZO / ZO-SGD math (docs/ARCHITECTURE.md, 'The algorithms'),
// shared by the CPU and CUDA backends: parameter stream ids, step seeds, the
// out-of-place perturbation, the fused update and the projected gradient.
//
// All fp32 expressions below are written out operation by operation with
// correctly rounded primitives (hd.h), so the result is the same bits on
// every device. Determinism contract (docs/ARCHITECTURE.md, 'Determinism
// contract'): z of any element depends only on (step seed, stream, element
// index) (normal.h), θ± is computed from the unperturbed θ, and g is reduced
// over examples in one canonical order.
#pragma once

#include <cstdint>

#include "base/hd.h"
#include "runtime/zo/philox.h"

namespace zosched {

// Parameter stream ids: which Philox stream (normal.h, counter word 2) the
// trainable parameters of a model part draw their z from. Element indices
// count from 0 within the part, in the order of its flattened tensors.
//   decoder block b (0 <= b < num_layers)  -> b
//   embeddings part (token + position)      -> num_layers
//   head part (final norm, LM head)         -> num_layers + 1
//   LoRA adapters or prefix of block b      -> num_layers + 2 + b
ZS_HD inline uint32_t BlockStream(int block) { return static_cast<uint32_t>(block); }
ZS_HD inline uint32_t EmbeddingStream(int num_layers) { return static_cast<uint32_t>(num_layers); }
ZS_HD inline uint32_t HeadStream(int num_layers) { return static_cast<uint32_t>(num_layers) + 1u; }
ZS_HD inline uint32_t AdapterStream(int num_layers, int block) {
  return static_cast<uint32_t>(num_layers) + 2u + static_cast<uint32_t>(block);
}

// Returns the seed of training step `step` (>= 0) of a run with base seed
// `base_seed`: Philox4x32_10(counter = (uint32(step), uint32(step >> 32), 0, 0),
// key = (uint32(base_seed), uint32(base_seed >> 32))), words 0 and 1 as the low
// and high halves. So every step's seed is known up front (resume, and the
// fused update of step t inside step t+1's pass).
ZS_HD inline uint64_t StepSeed(uint64_t base_seed, int64_t step) {
  const uint64_t s = static_cast<uint64_t>(step);
  const Uint4 w = Philox4x32_10(
      Uint4{{static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32), 0u, 0u}},
      Uint2{{static_cast<uint32_t>(base_seed), static_cast<uint32_t>(base_seed >> 32)}});
  return static_cast<uint64_t>(w.v[0]) | (static_cast<uint64_t>(w.v[1]) << 32);
}

// Returns the seed of perturbation direction `direction` (>= 0) of a step
// whose seed is `step_seed` (n-SPSA: q directions a step): direction 0 is
// the step seed itself, so a one-direction run draws the z it always drew;
// direction d >= 1 is Philox4x32_10(counter = (uint32(d), 0, 1, 0), key =
// (uint32(step_seed), uint32(step_seed >> 32))), words 0 and 1 as the low
// and high halves (the counter's word 2 set apart from StepSeed's).
ZS_HD inline uint64_t DirectionSeed(uint64_t step_seed, int direction) {
  if (direction == 0) return step_seed;
  const Uint4 w = Philox4x32_10(
      Uint4{{static_cast<uint32_t>(direction), 0u, 1u, 0u}},
      Uint2{{static_cast<uint32_t>(step_seed), static_cast<uint32_t>(step_seed >> 32)}});
  return static_cast<uint64_t>(w.v[0]) | (static_cast<uint64_t>(w.v[1]) << 32);
}

// Returns the perturbed parameter θ + sign·ε·z, out of place, evaluated
// exactly as  theta + ((sign < 0 ? -eps : eps) * z)  — i.e. theta + (sign*eps)*z
// with two roundings (the product, then the sum), never fused. `sign` is +1
// or -1 (any value < 0 counts as -1); `eps` > 0 is the perturbation scale
// (same units as θ per unit z); z from normal.h.
ZS_HD inline float Perturbed(float theta, float z, float eps, int sign) {
  const float signed_eps = sign < 0 ? -eps : eps;  // exact
  return hd::AddRn(theta, hd::MulRn(signed_eps, z));
}

// θ - η (gz + λ θ) for a step gz (g z, or DirectionsMean of several):
//   decay = decays ? weight_decay * theta : 0;  d = gz + decay;
//   out = theta - lr * d  (each rounded to fp32, never fused).
ZS_HD inline float UpdatedAlong(float theta, float gz, float lr, float weight_decay,
                                bool decays) {
  const float decay = decays ? hd::MulRn(weight_decay, theta) : 0.0f;
  const float d = hd::AddRn(gz, decay);
  return hd::SubRn(theta, hd::MulRn(lr, d));
}

// Returns the ZO-SGD update θ - η (g z + λ θ), evaluated exactly as
//   gz    = g * z
//   decay = decays ? weight_decay * theta : 0
//   d     = gz + decay
//   out   = theta - lr * d
// (each operation rounded to fp32, never fused). `lr` = η (learning rate),
// `g` the projected gradient of the step (ProjectedGradient), `weight_decay`
// = λ, applied only when `decays` (false for biases and LayerNorm,
// docs/ARCHITECTURE.md, 'The algorithms'). `theta` is the unperturbed
// parameter.
ZS_HD inline float Updated(float theta, float z, float lr, float g, float weight_decay,
                           bool decays) {
  return UpdatedAlong(theta, hd::MulRn(g, z), lr, weight_decay, decays);
}

// The update of several directions (n-SPSA), θ - η((1/q) Σ_i g_i z_i + λθ),
// is UpdatedAlong(theta, DirectionsMean(DirectionsSum(g, z, q), q), ...),
// evaluated exactly as:
//   DirectionsSum:  gz = g_0 * z_0, then for i = 1 .. q-1: gz = gz + g_i * z_i
//                   (each product and sum rounded to fp32, in direction order)
//   DirectionsMean: gz / q when q > 1 (one correctly rounded division); gz
//                   itself when q = 1
// so q = 1 gives Updated's bits. `g`, `z`: q values each, z_i the normal of
// direction i (DirectionSeed) at this element.
ZS_HD inline float DirectionsSum(const float* g, const float* z, int q) {
  float gz = hd::MulRn(g[0], z[0]);
  for (int i = 1; i < q; ++i) gz = hd::AddRn(gz, hd::MulRn(g[i], z[i]));
  return gz;
}

ZS_HD inline float DirectionsMean(float gz, int q) {
  return q > 1 ? hd::DivRn(gz, static_cast<float>(q)) : gz;
}

// Returns the SPSA projected gradient of one step,
//   g = (1 / batch) * sum_e (L+_e - L-_e) / (2 eps),
// in fp32, from the per-example losses loss_plus[e] = L(θ + εz; example e) and
// loss_minus[e] = L(θ - εz; example e), e in [0, batch), in the canonical
// example order of the global batch (DDP ranks gather their shards' losses in
// that order first). Evaluated exactly as, in double:
//   sum = 0; for e = 0 .. batch-1: sum = sum + (double(L+_e) - double(L-_e))
//   g   = float(sum / (double(batch) * (2.0 * double(eps))))
// i.e. summed in example order in double and rounded to float once, at the
// end (each double operation correctly rounded and never fused, hd.h).
// Preconditions (caller invariants): batch >= 1, eps > 0, both arrays hold
// `batch` floats. Units: loss units per unit of ε.
ZS_HD inline float ProjectedGradient(const float* loss_plus, const float* loss_minus, int batch,
                                     float eps) {
  double sum = 0.0;
  for (int e = 0; e < batch; ++e) {
    const double diff =
        hd::SubRnD(static_cast<double>(loss_plus[e]), static_cast<double>(loss_minus[e]));
    sum = hd::AddRnD(sum, diff);
  }
  const double denom =
      hd::MulRnD(static_cast<double>(batch), hd::MulRnD(2.0, static_cast<double>(eps)));
  return static_cast<float>(hd::DivRnD(sum, denom));  // round to nearest float
}

}  // namespace zosched
