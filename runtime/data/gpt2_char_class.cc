#include "runtime/data/gpt2_char_class.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>

namespace zosched {
namespace {

struct Range {
  uint32_t first, last;
  CharClass char_class;
};

constexpr Range kRanges[] = {
#include "runtime/data/gpt2_char_class_table.inc"
};

// Gpt2CharClass's binary search needs this of the generated table.
constexpr bool RangesAreSortedAndDisjoint() {
  for (size_t i = 0; i < std::size(kRanges); ++i) {
    if (kRanges[i].first > kRanges[i].last) return false;
    if (i > 0 && kRanges[i - 1].last >= kRanges[i].first) return false;
  }
  return true;
}
static_assert(RangesAreSortedAndDisjoint(), "gpt2_char_class_table.inc: ranges out of order");

// ASCII looked up directly: most text is mostly ASCII.
const std::array<CharClass, 128>& AsciiClasses() {
  static const std::array<CharClass, 128> table = [] {
    std::array<CharClass, 128> t;
    t.fill(CharClass::kOther);
    for (const Range& r : kRanges) {
      for (uint32_t c = r.first; c <= r.last && c < 128; ++c) t[c] = r.char_class;
    }
    return t;
  }();
  return table;
}

}  // namespace

CharClass Gpt2CharClass(uint32_t code_point) {
  if (code_point < 128) return AsciiClasses()[code_point];
  // The first range ending at or after the code point.
  const Range* it = std::lower_bound(
      std::begin(kRanges), std::end(kRanges), code_point,
      [](const Range& r, uint32_t cp) { return r.last < cp; });
  return it != std::end(kRanges) && it->first <= code_point ? it->char_class : CharClass::kOther;
}

}  // namespace zosched
