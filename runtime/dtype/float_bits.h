// A float's bit pattern and back, for tests that compare floats bit for bit
// (-0 against +0, one NaN against another).
#pragma once

#include <cstdint>
#include <cstring>

namespace zosched {

inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

}  // namespace zosched
