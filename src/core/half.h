// 16-bit float storage types. Arithmetic happens in float (OpMath<T> below); these only convert.
// The conversions are OF_HD: device kernels load and store these types the same way (bit-exact
// with the host; memcpy compiles to a register move in device code too).
#pragma once
#include <cstdint>
#include <cstring>

#include "core/hd.h"

namespace oneflow {

OF_INLINE_HD uint32_t FloatBits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
OF_INLINE_HD float BitsFloat(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

struct Half {
  uint16_t x = 0;
  Half() = default;
  OF_HD Half(float f) : x(FromFloat(f)) {}  // NOLINT: implicit like a builtin float type
  OF_HD operator float() const { return ToFloat(x); }

  // IEEE binary16 <-> binary32 with round-to-nearest-even, nan/inf/subnormals preserved.
  OF_HD static uint16_t FromFloat(float f) {
    uint32_t u = FloatBits(f), sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u >= 0x47800000u) return sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u);  // inf or nan
    if (u < 0x38800000u) {  // the half result is subnormal or zero: let the FPU round
      float a = BitsFloat(u) + 0.5f;
      return sign | static_cast<uint16_t>(FloatBits(a) - 0x3f000000u);
    }
    uint32_t mant_odd = (u >> 13) & 1u;
    u += 0xc8000fffu + mant_odd;  // rebias the exponent, round to nearest even
    return sign | static_cast<uint16_t>(u >> 13);
  }
  OF_HD static float ToFloat(uint16_t h) {
    uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
    if (exp == 0x1f) return BitsFloat(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
      float v = static_cast<float>(mant) * (1.0f / 16777216.0f);  // mant * 2^-24
      return sign ? -v : v;
    }
    return BitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  OF_HD BFloat16(float f) : x(FromFloat(f)) {}  // NOLINT
  OF_HD operator float() const { return BitsFloat(static_cast<uint32_t>(x) << 16); }
  OF_HD static uint16_t FromFloat(float f) {
    uint32_t u = FloatBits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // quiet nan
    u += 0x7fffu + ((u >> 16) & 1u);                      // round to nearest even
    return static_cast<uint16_t>(u >> 16);
  }
};

}  // namespace oneflow
