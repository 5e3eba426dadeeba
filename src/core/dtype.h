// Data types, their promotion rules (PyTorch's), and the one place that dispatches on them.
#pragma once
#include <complex>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/half.h"

namespace oneflow {

// Note [DType numbers]: a dtype's number is stored in saved nn.Graph programs (graph/serialize.cpp)
// and sent between processes, so the numbers never change: a new dtype is appended (kInt16 came
// after the complex types). Nothing may rely on the enum order; ordering questions go through
// IntegralRank (promotion) or the explicit predicates below.
enum class DType : int8_t {
  kBool = 0, kInt8, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64,
  kComplex64, kComplex128,  // std::complex<float> / <double> (Note [Complex dtypes])
  kInt16,
};
constexpr int kNumDTypes = 12;

int64_t ElementSize(DType t);
const char* DTypeName(DType t);  // "float32", as in `oneflow.float32`
inline bool IsFloating(DType t) { return t >= DType::kFloat16 && t <= DType::kFloat64; }
inline bool IsComplex(DType t) { return t == DType::kComplex64 || t == DType::kComplex128; }
inline bool IsIntegral(DType t, bool include_bool) {
  return t == DType::kBool ? include_bool : !IsFloating(t) && !IsComplex(t);
}
// complex64 <-> float32, complex128 <-> float64 (the dtype of .real/.imag, abs, angle).
DType ToRealDType(DType t);
DType ToComplexDType(DType t);  // floating (or integral: default float) -> its complex dtype
const char* TorchTypeName(DType t);  // PyTorch's scalar-type name: "Float", "ComplexFloat"
DType PromoteTypes(DType a, DType b);
DType DefaultFloatDType();
void SetDefaultFloatDType(DType t);

template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::kFloat16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBFloat16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<std::complex<float>> { static constexpr DType value = DType::kComplex64; };
template <> struct DTypeOf<std::complex<double>> { static constexpr DType value = DType::kComplex128; };

template <typename T> constexpr bool kIsComplexT = false;
template <typename T> constexpr bool kIsComplexT<std::complex<T>> = true;

// The type arithmetic is done in: 16-bit floats compute in float, everything else in itself.
template <typename T> struct OpMathT { using type = T; };
template <> struct OpMathT<Half> { using type = float; };
template <> struct OpMathT<BFloat16> { using type = float; };
template <typename T> using OpMath = typename OpMathT<T>::type;

template <typename T> struct Tag { using type = T; };

// Note [Complex dtypes]: complex is an opt-in dispatch set. DispatchAll and the other real sets
// never instantiate a kernel for std::complex: a complex tensor reaching them is a RuntimeError
// naming the op ("not implemented for 'ComplexFloat'"), found before the kernel writes. Kernels
// with a complex meaning dispatch with DispatchComplex / DispatchAllAndComplex instead.
[[noreturn]] void ThrowComplexNotImplemented(DType t);

// Calls f(Tag<T>{}) for the C++ type of `t`. The single switch over dtypes (docs/architecture.md §4).
template <typename F>
decltype(auto) DispatchAll(DType t, F&& f) {
  switch (t) {
    case DType::kBool: return f(Tag<bool>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    case DType::kUInt8: return f(Tag<uint8_t>{});
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    case DType::kFloat16: return f(Tag<Half>{});
    case DType::kBFloat16: return f(Tag<BFloat16>{});
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    case DType::kComplex64:
    case DType::kComplex128: ThrowComplexNotImplemented(t);
  }
  OF_THROW(kRuntime) << "unknown dtype";
}

template <typename F>
decltype(auto) DispatchComplex(DType t, F&& f) {
  if (t == DType::kComplex64) return f(Tag<std::complex<float>>{});
  if (t == DType::kComplex128) return f(Tag<std::complex<double>>{});
  OF_THROW(kType) << "expected a complex tensor, got " << DTypeName(t);
}

template <typename F>
decltype(auto) DispatchAllAndComplex(DType t, F&& f) {
  if (IsComplex(t)) return DispatchComplex(t, std::forward<F>(f));
  return DispatchAll(t, std::forward<F>(f));
}

// Same, restricted to floating types; other dtypes are a TypeError naming the op.
template <typename F>
decltype(auto) DispatchFloat(DType t, F&& f) {
  switch (t) {
    case DType::kFloat16: return f(Tag<Half>{});
    case DType::kBFloat16: return f(Tag<BFloat16>{});
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    default: break;
  }
  if (IsComplex(t)) ThrowComplexNotImplemented(t);
  OF_THROW(kType) << "expected a floating point tensor, got " << DTypeName(t);
}

// Everything except bool (arithmetic that PyTorch refuses on bool, e.g. neg, sub).
template <typename F>
decltype(auto) DispatchNumber(DType t, F&& f) {
  OF_CHECK_TYPE(t != DType::kBool) << "not supported for bool tensors";
  return DispatchAll(t, std::forward<F>(f));
}

}  // namespace oneflow
