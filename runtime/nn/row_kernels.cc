#include "runtime/nn/row_kernels.h"

#include "runtime/nn/element_math.h"

namespace zosched {

void RmsNormRow(const float* x, int64_t n, const float* w, float eps, float* y) {
  float lane[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) lane[l] = hd::AddRn(lane[l], hd::MulRn(x[i + l], x[i + l]));
  }
  for (int l = 0; i < n; ++i, ++l) lane[l] = hd::AddRn(lane[l], hd::MulRn(x[i], x[i]));
  for (int width = 8; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lane[l] = hd::AddRn(lane[l], lane[l + width]);
  }
  const float rstd = RmsNormRstd(hd::DivRn(lane[0], static_cast<float>(n)), eps);
  for (int64_t j = 0; j < n; ++j) y[j] = RmsNormElement(x[j], rstd, w[j]);
}

void GeluTanhRange(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = GeluTanh(x[i]);
}

void SwiGluRange(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = SwiGlu(gate[i], up[i]);
}

void RotateHead(float* x, int64_t d, const float* c, const float* s) {
  const int64_t half = d / 2;
  for (int64_t i = 0; i < half; ++i) RotatePair(x[i], x[i + half], c[i], s[i], &x[i], &x[i + half]);
}

}  // namespace zosched
