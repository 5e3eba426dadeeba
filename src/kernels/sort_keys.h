// Note [Sort keys] (kernels/sort.h): values as unsigned integer keys whose unsigned order is
// PyTorch's order (NaN after +inf, every NaN alike, -0.0 equal to 0.0). Shared by the CPU sort
// kernels (sort.cpp) and the CUDA ones (cuda/sort.cu), hence OF_HD.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/dtype.h"
#include "core/hd.h"

namespace oneflow {

template <typename T> struct Bits;  // the unsigned key type of T, and its float layout
template <> struct Bits<bool> { using K = uint8_t; };
template <> struct Bits<uint8_t> { using K = uint8_t; };
template <> struct Bits<int8_t> { using K = uint8_t; };
template <> struct Bits<int16_t> { using K = uint16_t; };
template <> struct Bits<int32_t> { using K = uint32_t; };
template <> struct Bits<int64_t> { using K = uint64_t; };
template <> struct Bits<Half> { using K = uint16_t; static constexpr K kInf = 0x7c00, kNan = 0x7e00; };
template <> struct Bits<BFloat16> { using K = uint16_t; static constexpr K kInf = 0x7f80, kNan = 0x7fc0; };
template <> struct Bits<float> { using K = uint32_t; static constexpr K kInf = 0x7f800000u, kNan = 0x7fc00000u; };
template <> struct Bits<double> {
  using K = uint64_t;
  static constexpr K kInf = 0x7ff0000000000000ull, kNan = 0x7ff8000000000000ull;
};
template <typename T> using KeyOf = typename Bits<T>::K;

template <typename T>
OF_HD inline KeyOf<T> ToKey(T v) {
  using K = KeyOf<T>;
  constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, uint8_t>) {
    return static_cast<K>(v);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<K>(static_cast<K>(v) ^ kSign);
  } else {
    K b;
    memcpy(&b, &v, sizeof(K));
    const K mag = b & static_cast<K>(~kSign);
    if (mag > Bits<T>::kInf) b = Bits<T>::kNan;  // every NaN alike, after +inf
    if (mag == 0) b = 0;                         // -0.0 == 0.0
    return (b & kSign) ? static_cast<K>(~b) : static_cast<K>(b | kSign);
  }
}

// Whether a key is the (one) NaN key.
template <typename T>
OF_HD inline bool IsNanKey(KeyOf<T> k) {
  using K = KeyOf<T>;
  if constexpr (std::is_floating_point_v<OpMath<T>>) return k == static_cast<K>(Bits<T>::kNan | (K(1) << (sizeof(K) * 8 - 1)));
  return false;
}

}  // namespace oneflow
