// Vectorised float / double math from SLEEF (Debian libsleef-dev, Boost licence), the library
// PyTorch's CPU kernels call for the same functions. libm's versions stay scalar (GCC vectorises
// them only under -ffast-math, which would also drop NaN/inf semantics), 3-8x slower than these.
// Note [SLEEF blocks]: a pointwise functor that derives from SleefBlock<fn> gains host-only
// Block(in, out, n) overloads for float and double; the CPU unary loop (kernels/loop.h,
// UnaryInner) calls them over contiguous runs, every other case (strided, 16-bit, complex,
// CUDA) keeps the functor's scalar operator(). Binary and ternary functors may have Block2 /
// Block3 (SleefBlock2, or their own compositions): the CPU loops call them for float / double
// operands of every layout, gathering non-contiguous ones into small buffers, so a result does
// not depend on the layout. sleef.h itself is seen by sleef_map.cpp only.
#pragma once
#include <algorithm>
#include <cstdint>

namespace oneflow {

enum class SleefFn : int {
  kNone, kExp, kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAtanh,
  kErf, kErfc, kLog, kLog2, kLog10, kLog1p, kExp2, kExpm1, kLgamma,
};

// out[i] = fn(in[i]) for i < n (in == out allowed).
void SleefMap(SleefFn fn, const float* in, float* out, int64_t n);
void SleefMap(SleefFn fn, const double* in, double* out, int64_t n);

// Two-operand kernels: out[i] = fn(a[i], b[i]) for i < n (out may be a or b).
enum class SleefFn2 : int { kAtan2, kFmod, kHypot, kPow };
void SleefMap2(SleefFn2 fn, const float* a, const float* b, float* out, int64_t n);
void SleefMap2(SleefFn2 fn, const double* a, const double* b, double* out, int64_t n);

// out[i] = pow(in[i], e) for one exponent (in == out allowed).
void SleefPowScalar(const float* in, float e, float* out, int64_t n);
void SleefPowScalar(const double* in, double e, double* out, int64_t n);

// Compositions (softplus, logsigmoid, elu): out = post(x, g(f(pre(x)))) with f, g SLEEF kernels
// (g may be kNone), over chunks through a stack buffer; `pre` and `post` are loops that vectorise.
template <typename T, typename Pre, typename Post>
void SleefCompose(const T* in, T* out, int64_t n, SleefFn f, SleefFn g, Pre pre, Post post) {
  constexpr int64_t kChunk = 256;
  T t[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = std::min(kChunk, n - i0);
    for (int64_t i = 0; i < m; ++i) t[i] = pre(in[i0 + i]);
    SleefMap(f, t, t, m);
    if (g != SleefFn::kNone) SleefMap(g, t, t, m);
    for (int64_t i = 0; i < m; ++i) out[i0 + i] = post(in[i0 + i], t[i]);
  }
}

template <SleefFn kFn>
struct SleefBlock {
  void Block(const float* in, float* out, int64_t n) const { SleefMap(kFn, in, out, n); }
  void Block(const double* in, double* out, int64_t n) const { SleefMap(kFn, in, out, n); }
};

// The two-operand form: Block2(a, b, out, n), which the CPU binary loop (BinaryInner) calls for
// float / double operands in any layout (non-contiguous ones through small buffers).
template <SleefFn2 kFn>
struct SleefBlock2 {
  void Block2(const float* a, const float* b, float* out, int64_t n) const { SleefMap2(kFn, a, b, out, n); }
  void Block2(const double* a, const double* b, double* out, int64_t n) const { SleefMap2(kFn, a, b, out, n); }
};

}  // namespace oneflow
