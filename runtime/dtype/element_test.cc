// element.h against convert.h: the generic load/store is exactly the
// per-element conversion, for every 16-bit pattern and a sweep of floats.
#include "runtime/dtype/element.h"

#include <cstring>

#include "gtest/gtest.h"
#include "runtime/dtype/convert.h"
#include "runtime/dtype/float_bits.h"

namespace zosched {
namespace {

TEST(Element, WideningIsExactForEverySixteenBitPattern) {
  for (uint32_t b = 0; b <= 0xffffu; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    EXPECT_EQ(Bits(ToFloat(Half{bits})), Bits(Fp16ToFloat(bits))) << b;
    EXPECT_EQ(Bits(ToFloat(BFloat16{bits})), Bits(Bf16ToFloat(bits))) << b;
  }
}

TEST(Element, NarrowingRoundsAsConvertDoes) {
  for (uint32_t u = 0; u < 0xffffffffu - 65521u; u += 65521u) {  // a prime stride over all floats
    float x;
    std::memcpy(&x, &u, sizeof(x));
    EXPECT_EQ(FromFloat<Half>(x).bits, FloatToFp16(x)) << u;
    EXPECT_EQ(FromFloat<BFloat16>(x).bits, FloatToBf16(x)) << u;
    EXPECT_EQ(Bits(FromFloat<float>(x)), u);
  }
}

TEST(Element, Bytes) {
  EXPECT_EQ(ElementBytes(ElementType::kF32), 4);
  EXPECT_EQ(ElementBytes(ElementType::kF16), 2);
  EXPECT_EQ(ElementBytes(ElementType::kBF16), 2);
}

}  // namespace
}  // namespace zosched
