// Unsigned 32-bit division by a run-time constant as a multiply-high, an add and a shift
// (Granlund & Montgomery, "Division by invariant integers using multiplication", 1994): the
// strided kernels unravel every element's index into coordinates, and a hardware-less integer
// division per dimension (about 20 instructions for 32 bits, far more for 64) dominated those
// kernels. Exact for numerators below 2^31 and divisors in [1, 2^31].
#pragma once
#include <cstdint>

#include "core/hd.h"

namespace oneflow::cuda {

struct FastDiv {
  uint32_t d = 1, m = 1, s = 0;  // divisor, magic multiplier, shift

  FastDiv() = default;
  explicit FastDiv(uint32_t div) : d(div) {
    while ((uint64_t(1) << s) < div) ++s;  // s = ceil(log2(d)), so 2^(s-1) < d <= 2^s
    // m = floor(2^32 (2^s - d) / d) + 1 < 2^32 because 2^s - d < d.
    m = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << s) - div)) / div + 1);
  }

  OF_HD uint32_t Div(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint32_t hi = __umulhi(n, m);
#else
    const uint32_t hi = static_cast<uint32_t>((uint64_t(n) * m) >> 32);
#endif
    return (hi + n) >> s;  // hi <= n < 2^31: the sum does not wrap
  }
};

}  // namespace oneflow::cuda
