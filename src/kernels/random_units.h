// How Philox words become values, shared by the CPU fills (random_fill.cpp) and the CUDA ones
// (cuda/random.cu), so that a (seed, offset) gives the same numbers on both devices (bit for bit
// where no transcendental function is involved; Note [Philox offsets] in core/generator.h).
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "core/hd.h"

namespace oneflow {

// Compute type: float for float/half/bfloat16 (one word per value), double (two words).
template <typename T>
using RandCompute = std::conditional_t<std::is_same_v<T, double>, double, float>;
template <typename T>
constexpr int kRandWords = std::is_same_v<T, double> ? 2 : 1;
// Random bits of a [0, 1) value: as many as the output type holds, so that every value is exactly
// representable and rand() never rounds up to 1.
template <typename T>
constexpr int kRandBits = std::is_same_v<T, double>  ? 53
                          : std::is_same_v<T, float> ? 24
                          : std::is_same_v<T, Half>  ? 11
                                                     : 8;
// The Box-Muller pairs of normal fills are (j, j + cnt / 2) within batches of this many blocks.
constexpr int64_t kRandBatchBlocks = 64;

// Value k of a word array as a [0, 1) uniform (open: (0, 1), for logs and tangents).
template <typename T>
OF_HD inline RandCompute<T> RandUnit(const uint32_t* w, int64_t k, bool open) {
  if constexpr (std::is_same_v<T, double>) {
    const uint64_t x = (uint64_t(w[2 * k]) << 32 | w[2 * k + 1]) >> 11;
    return (double(int64_t(x)) + (open ? 0.5 : 0.0)) * 0x1.0p-53;
  } else {
    constexpr float kScale = 1.0f / float(1 << kRandBits<T>);
    return (float(int32_t(w[k] >> (32 - kRandBits<T>))) + (open ? 0.5f : 0.0f)) * kScale;
  }
}

}  // namespace oneflow
