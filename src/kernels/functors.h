// Elementwise math, one small struct per op; `T` is the OpMath type (float for 16-bit floats).
// Shared by every device (CPU now, CUDA later). Semantics follow PyTorch, NaN included.
// Every operator() here and in functors/<family>.h, and every helper they call, is OF_HD
// (core/hd.h) so that CUDA kernels call them too; tools/check_cuda_functors.py checks it with nvcc.
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "core/hd.h"
#ifdef __CUDACC__
#include "kernels/complex_std.h"  // before the functors (Note [Complex on CUDA])
#endif
#include "kernels/sleef_map.h"
#include "kernels/vec_math.h"

namespace oneflow {

template <typename T> constexpr bool kIsFloat = std::is_floating_point_v<T>;
template <typename T> constexpr bool kIsCplx = false;
template <typename T> constexpr bool kIsCplx<std::complex<T>> = true;

// Note [Complex functors]: a functor with a complex meaning opts in with a member
// `static constexpr int kComplex`: 1 = complex in, complex out (exp, mul); 2 = complex in, real
// out (abs, angle). The generic pointwise bodies (ops/pointwise.h) instantiate a functor for
// std::complex only when it opts in; for the others a complex input is a RuntimeError naming the
// op, raised before the output is allocated.
template <typename F> constexpr int ComplexKindOf() {
  if constexpr (requires { F::kComplex; }) return F::kComplex; else return 0;
}
template <typename F> constexpr int kComplexKind = ComplexKindOf<F>();

// Note [Complex log1p / expm1]: <complex> has no log2, log1p or expm1. On real T these are the
// libm functions; on complex T, log1p and expm1 are rebuilt from real log1p / expm1 so that they
// keep their precision near 0 (log(1 + z) and exp(z) - 1 would cancel), which is what PyTorch's
// complex versions do: log1p(x + iy) = 0.5 log1p(x(2 + x) + y^2) + i atan2(y, 1 + x) for small
// |z|; expm1(x + iy) = expm1(x) cos y - 2 sin^2(y/2) + i e^x sin y.
template <typename T> OF_HD T ComplexLog2(T x) {
  if constexpr (kIsCplx<T>) return std::log(x) / typename T::value_type(0.69314718055994530942);
  else return std::log2(x);
}
template <typename T> OF_HD T ComplexLog1p(T z) {
  if constexpr (kIsCplx<T>) {
    using R = typename T::value_type;
    const R x = z.real(), y = z.imag();
    const R theta = std::atan2(y, x + R(1));
    if (std::abs(z) < R(0.5)) {
      const R r = x * (R(2) + x) + y * y;
      return T(r == R(0) ? x : R(0.5) * std::log1p(r), theta);  // r underflows: log1p(x) ~ x
    }
    return T(std::log(std::hypot(x + R(1), y)), theta);
  } else {
    return std::log1p(z);
  }
}
template <typename T> OF_HD T ComplexExpm1(T z) {
  if constexpr (kIsCplx<T>) {
    using R = typename T::value_type;
    const R x = z.real(), y = z.imag(), h = std::sin(y / R(2));
    return T(std::expm1(x) * std::cos(y) - R(2) * h * h, std::exp(x) * std::sin(y));
  } else {
    return std::expm1(z);
  }
}

// ---- unary, floating result ----
#define OF_FLOAT_UNARY(Name, expr) \
  struct Name##Functor { template <typename T> OF_HD T operator()(T x) const { return expr; } };
// The same with a complex meaning (the expression is valid for std::complex too).
#define OF_FLOAT_UNARY_C(Name, expr)                                          \
  struct Name##Functor {                                                      \
    static constexpr int kComplex = 1;                                        \
    template <typename T> OF_HD T operator()(T x) const { return expr; }      \
  };
// With a SLEEF kernel for contiguous float / double runs on the CPU (Note [SLEEF blocks]).
#define OF_FLOAT_UNARY_S(Name, expr, fn) \
  struct Name##Functor : SleefBlock<SleefFn::fn> { template <typename T> OF_HD T operator()(T x) const { return expr; } };
#define OF_FLOAT_UNARY_CS(Name, expr, fn)                                     \
  struct Name##Functor : SleefBlock<SleefFn::fn> {                            \
    static constexpr int kComplex = 1;                                        \
    template <typename T> OF_HD T operator()(T x) const { return expr; }      \
  };
// float: the vectorisable form of kernels/vec_math.h (if constexpr rather than a lambda, so that
// device code can call it too).
struct ExpFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T x) const {
  if constexpr (std::is_same_v<T, float>) return ExpFloat(x); else return std::exp(x); } };
OF_FLOAT_UNARY_CS(Log, std::log(x), kLog)
OF_FLOAT_UNARY_CS(Log2, ComplexLog2(x), kLog2)
OF_FLOAT_UNARY_CS(Log10, std::log10(x), kLog10)
OF_FLOAT_UNARY_CS(Log1p, ComplexLog1p(x), kLog1p)
OF_FLOAT_UNARY_CS(Expm1, ComplexExpm1(x), kExpm1)
OF_FLOAT_UNARY_C(Sqrt, std::sqrt(x))
OF_FLOAT_UNARY_C(Rsqrt, T(1) / std::sqrt(x))
OF_FLOAT_UNARY_CS(Sin, std::sin(x), kSin)
OF_FLOAT_UNARY_CS(Cos, std::cos(x), kCos)
OF_FLOAT_UNARY_CS(Tan, std::tan(x), kTan)
OF_FLOAT_UNARY_CS(Asin, std::asin(x), kAsin)
OF_FLOAT_UNARY_CS(Acos, std::acos(x), kAcos)
OF_FLOAT_UNARY_CS(Atan, std::atan(x), kAtan)
OF_FLOAT_UNARY_CS(Sinh, std::sinh(x), kSinh)
OF_FLOAT_UNARY_CS(Cosh, std::cosh(x), kCosh)
// float tanh / sigmoid on the vectorisable forms of kernels/vec_math.h (libm's stay scalar).
struct TanhFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T x) const {
  if constexpr (std::is_same_v<T, float>) return TanhFloat(x); else return std::tanh(x); } };
OF_FLOAT_UNARY_C(Asinh, std::asinh(x))
OF_FLOAT_UNARY_C(Acosh, std::acosh(x))
OF_FLOAT_UNARY_CS(Atanh, std::atanh(x), kAtanh)
struct SigmoidFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T x) const {
  if constexpr (std::is_same_v<T, float>) return SigmoidFloat(x); else return T(1) / (T(1) + std::exp(-x)); } };
OF_FLOAT_UNARY_S(Erf, std::erf(x), kErf)
OF_FLOAT_UNARY_S(Erfc, std::erfc(x), kErfc)
OF_FLOAT_UNARY_C(Reciprocal, T(1) / x)
#undef OF_FLOAT_UNARY
#undef OF_FLOAT_UNARY_C
#undef OF_FLOAT_UNARY_S
#undef OF_FLOAT_UNARY_CS

// ---- unary, same dtype ----
struct AbsFunctor { static constexpr int kComplex = 2; template <typename T> OF_HD auto operator()(T x) const {
  if constexpr (kIsCplx<T>) return std::abs(x);
  else if constexpr (kIsFloat<T>) return std::fabs(x);  // clears the sign bit: |-0.0| = 0.0, as torch
  else if constexpr (std::is_unsigned_v<T>) return x; else return x < T(0) ? T(-x) : x; } };
struct NegFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T x) const { return T(-x); } };
// On complex input this is PyTorch's sgn, z / |z| (0 at 0): `sgn` is an alias of sign.
struct SignFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T x) const {
  // Two selects, not bool arithmetic (which GCC does not vectorise for floats); NaN gives 0
  // (both comparisons false), as PyTorch.
  if constexpr (kIsCplx<T>) { return x == T(0) ? T(0) : x / std::abs(x); } else {
  return T((T(0) < x ? T(1) : T(0)) - (x < T(0) ? T(1) : T(0))); } } };
struct SquareFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T x) const { return T(x * x); } };
struct CeilFunctor { template <typename T> OF_HD T operator()(T x) const {
  if constexpr (kIsFloat<T>) return std::ceil(x); else return x; } };
struct FloorFunctor { template <typename T> OF_HD T operator()(T x) const {
  if constexpr (kIsFloat<T>) return std::floor(x); else return x; } };
struct TruncFunctor { template <typename T> OF_HD T operator()(T x) const {
  if constexpr (kIsFloat<T>) return std::trunc(x); else return x; } };
// `x < 0 ? 0 : x` keeps NaN (NaN < 0 is false), as PyTorch's relu does.
struct ReluFunctor { template <typename T> OF_HD T operator()(T x) const { return x < T(0) ? T(0) : x; } };

// ---- unary, bool result ----
struct LogicalNotFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD bool operator()(T x) const { return !(x != T(0)); } };
struct IsnanFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD bool operator()(T x) const { return x != x; } };
struct IsinfFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD bool operator()(T x) const {
  if constexpr (kIsCplx<T>) return std::isinf(x.real()) || std::isinf(x.imag());
  else if constexpr (kIsFloat<T>) return std::isinf(x); else return false; } };
struct IsfiniteFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD bool operator()(T x) const {
  if constexpr (kIsCplx<T>) return std::isfinite(x.real()) && std::isfinite(x.imag());
  else if constexpr (kIsFloat<T>) return std::isfinite(x); else return true; } };
struct BitwiseNotFunctor { template <typename T> OF_HD T operator()(T x) const {
  if constexpr (std::is_same_v<T, bool>) return !x; else return T(~x); } };

// ---- binary ----
struct AddFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (std::is_same_v<T, bool>) return a || b; else return T(a + b); } };
struct SubFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T a, T b) const { return T(a - b); } };
struct MulFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (std::is_same_v<T, bool>) return a && b; else return T(a * b); } };
struct DivFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T a, T b) const { return a / b; } };

// Integer division rounds toward -inf (Python's //). Divisors were checked non-zero beforehand;
// MIN // -1 wraps like PyTorch instead of trapping.
template <typename T> OF_INLINE_HD T IntFloorDiv(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(-static_cast<std::make_unsigned_t<T>>(a));
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return a / b;
  }
}
template <typename T> OF_INLINE_HD T IntMod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    return a % b;
  }
}

struct FloorDivideFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (kIsFloat<T>) {
    // Floor of the true quotient, computed from fmod so that it is exact where a/b rounds.
    if (b == T(0)) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div == T(0)) return std::copysign(T(0), a / b);
    T fl = std::floor(div);
    if (div - fl > T(0.5)) fl += T(1);
    return fl;
  } else {
    return IntFloorDiv(a, b);
  }
} };
struct RemainderFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (kIsFloat<T>) {
    T r = std::fmod(a, b);
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
    return r;
  } else {
    return IntMod(a, b);
  }
}
  // Host float / double runs (Note [SLEEF blocks]): SLEEF's exact fmod, then the same sign fix.
  template <typename T> void Block2(const T* a, const T* b, T* o, int64_t n) const {
    constexpr int64_t kChunk = 256;
    T r[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      SleefMap2(SleefFn2::kFmod, a + i0, b + i0, r, m);
      for (int64_t i = 0; i < m; ++i) {
        const T bi = b[i0 + i];
        o[i0 + i] = (r[i] != T(0) && ((r[i] < T(0)) != (bi < T(0)))) ? r[i] + bi : r[i];
      }
    }
  }
};
struct FmodFunctor : SleefBlock2<SleefFn2::kFmod> { template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (kIsFloat<T>) return std::fmod(a, b);
  else if constexpr (std::is_signed_v<T>) return b == T(-1) ? T(0) : T(a % b);
  else return T(a % b);
} };
struct PowFunctor : SleefBlock2<SleefFn2::kPow> { static constexpr int kComplex = 1; template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (kIsFloat<T> || kIsCplx<T>) {
    return std::pow(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else {
    // Square-and-multiply with wrap-around. A negative exponent (a tensor's: a Python number's
    // was refused) gives the integer part of 1 / a^|b|, as PyTorch: 1, +-1 for a = -1, else 0.
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) return a == T(1) ? T(1) : a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : T(0);
    }
    using U = std::make_unsigned_t<T>;
    U base = static_cast<U>(a), result = 1;
    for (T e = b; e > 0; e >>= 1) {
      if (e & 1) result = static_cast<U>(result * base);
      base = static_cast<U>(base * base);
    }
    return static_cast<T>(result);
  }
}
  // A number exponent over float / double runs (host only; BinaryInner in
  // kernels/loop.h): the exponents PyTorch special-cases as products and roots (its results, e.g.
  // x^0.5 = sqrt(x), so -0 and -inf give its answers), any other on SLEEF's 1-ulp pow.
  template <typename T> void BlockScalarB(const T* a, T e, T* o, int64_t n) const {
    if (e == T(2)) { for (int64_t i = 0; i < n; ++i) o[i] = a[i] * a[i]; }
    else if (e == T(3)) { for (int64_t i = 0; i < n; ++i) o[i] = a[i] * a[i] * a[i]; }
    else if (e == T(0.5)) { for (int64_t i = 0; i < n; ++i) o[i] = std::sqrt(a[i]); }
    else if (e == T(-0.5)) { for (int64_t i = 0; i < n; ++i) o[i] = T(1) / std::sqrt(a[i]); }
    else if (e == T(-1)) { for (int64_t i = 0; i < n; ++i) o[i] = T(1) / a[i]; }
    else if (e == T(-2)) { for (int64_t i = 0; i < n; ++i) o[i] = T(1) / (a[i] * a[i]); }
    else SleefPowScalar(a, e, o, n);
  }
};
struct MaximumFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (kIsFloat<T>) { if (a != a) return a; if (b != b) return b; }
  return a > b ? a : b; } };
struct MinimumFunctor { template <typename T> OF_HD T operator()(T a, T b) const {
  if constexpr (kIsFloat<T>) { if (a != a) return a; if (b != b) return b; }
  return a < b ? a : b; } };
struct Atan2Functor : SleefBlock2<SleefFn2::kAtan2> {
  template <typename T> OF_HD T operator()(T a, T b) const { return std::atan2(a, b); } };
struct BitwiseAndFunctor { template <typename T> OF_HD T operator()(T a, T b) const { return T(a & b); } };
struct BitwiseOrFunctor { template <typename T> OF_HD T operator()(T a, T b) const { return T(a | b); } };
struct BitwiseXorFunctor { template <typename T> OF_HD T operator()(T a, T b) const { return T(a ^ b); } };

// ---- binary, bool result ----
struct LogicalAndFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD bool operator()(T a, T b) const { return (a != T(0)) && (b != T(0)); } };
struct LogicalOrFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD bool operator()(T a, T b) const { return (a != T(0)) || (b != T(0)); } };
struct LogicalXorFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD bool operator()(T a, T b) const { return (a != T(0)) != (b != T(0)); } };
struct EqFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD bool operator()(T a, T b) const { return a == b; } };
struct NeFunctor { static constexpr int kComplex = 1; template <typename T> OF_HD bool operator()(T a, T b) const { return a != b; } };
struct LtFunctor { template <typename T> OF_HD bool operator()(T a, T b) const { return a < b; } };
struct LeFunctor { template <typename T> OF_HD bool operator()(T a, T b) const { return a <= b; } };
struct GtFunctor { template <typename T> OF_HD bool operator()(T a, T b) const { return a > b; } };
struct GeFunctor { template <typename T> OF_HD bool operator()(T a, T b) const { return a >= b; } };

}  // namespace oneflow
