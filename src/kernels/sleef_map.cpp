#include "kernels/sleef_map.h"

#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstring>

#include "core/error.h"

namespace oneflow {

namespace {

// The widest vectors this build targets; SLEEF's dispatching entry points (no ISA suffix) pick
// the best kernel of that width for the running CPU (FMA or not). Accuracy: the 1-ulp (u10)
// variants, erfc's 1.5-ulp (u15), as PyTorch uses them. AVX-512 (16 floats) where the build
// targets it, as PyTorch's CPU capability "AVX512" does: on AVX-512 machines the 8-lane kernels
// ran these functions at 0.5-0.7x PyTorch's speed.
#if defined(__AVX512F__)
using VF = __m512;
using VD = __m512d;
constexpr int kWF = 16, kWD = 8;
VF LoadF(const float* p) { return _mm512_loadu_ps(p); }
void StoreF(float* p, VF v) { _mm512_storeu_ps(p, v); }
VD LoadD(const double* p) { return _mm512_loadu_pd(p); }
void StoreD(double* p, VD v) { _mm512_storeu_pd(p, v); }
#define OF_SLEEF(name, u) &Sleef_##name##f16_##u, &Sleef_##name##d8_##u
using FnF = decltype(&Sleef_sinf16_u10);
using FnD = decltype(&Sleef_sind8_u10);
#elif defined(__AVX__)
using VF = __m256;
using VD = __m256d;
constexpr int kWF = 8, kWD = 4;
VF LoadF(const float* p) { return _mm256_loadu_ps(p); }
void StoreF(float* p, VF v) { _mm256_storeu_ps(p, v); }
VD LoadD(const double* p) { return _mm256_loadu_pd(p); }
void StoreD(double* p, VD v) { _mm256_storeu_pd(p, v); }
#define OF_SLEEF(name, u) &Sleef_##name##f8_##u, &Sleef_##name##d4_##u
using FnF = decltype(&Sleef_sinf8_u10);  // (sleef.h declares the results const)
using FnD = decltype(&Sleef_sind4_u10);
#else
using VF = __m128;
using VD = __m128d;
constexpr int kWF = 4, kWD = 2;
VF LoadF(const float* p) { return _mm_loadu_ps(p); }
void StoreF(float* p, VF v) { _mm_storeu_ps(p, v); }
VD LoadD(const double* p) { return _mm_loadu_pd(p); }
void StoreD(double* p, VD v) { _mm_storeu_pd(p, v); }
#define OF_SLEEF(name, u) &Sleef_##name##f4_##u, &Sleef_##name##d2_##u
using FnF = decltype(&Sleef_sinf4_u10);
using FnD = decltype(&Sleef_sind2_u10);
#endif

// `limit`: inputs of at least this magnitude go to libm instead (`sf` / `sd`): SLEEF's sinhf /
// coshf overflow to inf from |x| = 88.7 on, though the results stay finite up to 89.4 (and 710.4
// in double), where libm and torch give them.
struct Entry {
  FnF f;
  FnD d;
  float limit_f = 0;
  double limit_d = 0;
  float (*sf)(float) = nullptr;
  double (*sd)(double) = nullptr;
};
float SinhF(float x) { return std::sinh(x); }
double SinhD(double x) { return std::sinh(x); }
float CoshF(float x) { return std::cosh(x); }
double CoshD(double x) { return std::cosh(x); }

Entry Lookup(SleefFn fn) {
  switch (fn) {
    case SleefFn::kExp: return {OF_SLEEF(exp, u10)};
    case SleefFn::kSin: return {OF_SLEEF(sin, u10)};
    case SleefFn::kCos: return {OF_SLEEF(cos, u10)};
    case SleefFn::kTan: return {OF_SLEEF(tan, u10)};
    case SleefFn::kAsin: return {OF_SLEEF(asin, u10)};
    case SleefFn::kAcos: return {OF_SLEEF(acos, u10)};
    case SleefFn::kAtan: return {OF_SLEEF(atan, u10)};
    case SleefFn::kSinh: return {OF_SLEEF(sinh, u10), 88.0f, 709.0, &SinhF, &SinhD};
    case SleefFn::kCosh: return {OF_SLEEF(cosh, u10), 88.0f, 709.0, &CoshF, &CoshD};
    case SleefFn::kAtanh: return {OF_SLEEF(atanh, u10)};
    case SleefFn::kErf: return {OF_SLEEF(erf, u10)};
    case SleefFn::kErfc: return {OF_SLEEF(erfc, u15)};
    case SleefFn::kLog: return {OF_SLEEF(log, u10)};
    case SleefFn::kLog2: return {OF_SLEEF(log2, u10)};
    case SleefFn::kLog10: return {OF_SLEEF(log10, u10)};
    case SleefFn::kLog1p: return {OF_SLEEF(log1p, u10)};
    case SleefFn::kExp2: return {OF_SLEEF(exp2, u10)};
    case SleefFn::kExpm1: return {OF_SLEEF(expm1, u10)};
    case SleefFn::kLgamma: return {OF_SLEEF(lgamma, u10)};
    case SleefFn::kNone: break;
  }
  OF_THROW(kRuntime) << "SleefMap: unknown function " << static_cast<int>(fn);
}
#undef OF_SLEEF

// Whole vectors, then the tail through a zero-padded vector (the padding's results are dropped).
// With a limit, each vector's inputs are kept (in may be out) to redo the large ones in libm.
template <int W, typename T, typename Fn, typename Load, typename Store>
void Map(Fn f, const T* in, T* out, int64_t n, Load load, Store store, T limit, T (*scalar)(T)) {
  int64_t i = 0;
  if (limit == 0) {
    for (; i + W <= n; i += W) store(out + i, f(load(in + i)));
  } else {
    for (; i + W <= n; i += W) {
      T x[W];
      std::memcpy(x, in + i, sizeof(x));
      store(out + i, f(load(x)));
      for (int k = 0; k < W; ++k)
        if (std::fabs(x[k]) >= limit) out[i + k] = scalar(x[k]);
    }
  }
  if (i < n) {
    T x[W] = {}, y[W];
    std::memcpy(x, in + i, (n - i) * sizeof(T));
    store(y, f(load(x)));
    for (int64_t k = 0; k < n - i; ++k) out[i + k] = limit != 0 && std::fabs(x[k]) >= limit ? scalar(x[k]) : y[k];
  }
}

// The two-operand form of Map (no limits): whole vectors, then the tail through zero-padded
// vectors.
template <int W, typename T, typename Fn, typename Load, typename Store>
void Map2(Fn f, const T* a, const T* b, T* out, int64_t n, Load load, Store store) {
  int64_t i = 0;
  for (; i + W <= n; i += W) store(out + i, f(load(a + i), load(b + i)));
  if (i < n) {
    T x[W] = {}, y[W] = {}, r[W];
    std::memcpy(x, a + i, (n - i) * sizeof(T));
    std::memcpy(y, b + i, (n - i) * sizeof(T));
    store(r, f(load(x), load(y)));
    std::memcpy(out + i, r, (n - i) * sizeof(T));
  }
}

#if defined(__AVX512F__)
#define OF_SLEEF2(name, u) &Sleef_##name##f16##u, &Sleef_##name##d8##u
using Fn2F = decltype(&Sleef_atan2f16_u10);
using Fn2D = decltype(&Sleef_atan2d8_u10);
#elif defined(__AVX__)
#define OF_SLEEF2(name, u) &Sleef_##name##f8##u, &Sleef_##name##d4##u
using Fn2F = decltype(&Sleef_atan2f8_u10);  // (const-qualified results, as FnF)
using Fn2D = decltype(&Sleef_atan2d4_u10);
#else
#define OF_SLEEF2(name, u) &Sleef_##name##f4##u, &Sleef_##name##d2##u
using Fn2F = decltype(&Sleef_atan2f4_u10);
using Fn2D = decltype(&Sleef_atan2d2_u10);
#endif
struct Entry2 {
  Fn2F f;
  Fn2D d;
};

// Accuracy as PyTorch's vectorised kernels: atan2 / pow 1 ulp, hypot 0.5 ulp, fmod exact.
Entry2 Lookup2(SleefFn2 fn) {
  switch (fn) {
    case SleefFn2::kAtan2: return {OF_SLEEF2(atan2, _u10)};
    case SleefFn2::kFmod: return {OF_SLEEF2(fmod, )};
    case SleefFn2::kHypot: return {OF_SLEEF2(hypot, _u05)};
    case SleefFn2::kPow: return {OF_SLEEF2(pow, _u10)};
  }
  OF_THROW(kRuntime) << "SleefMap2: unknown function " << static_cast<int>(fn);
}
#undef OF_SLEEF2

}  // namespace

void SleefMap2(SleefFn2 fn, const float* a, const float* b, float* out, int64_t n) {
  Map2<kWF>(Lookup2(fn).f, a, b, out, n, LoadF, StoreF);
}

void SleefMap2(SleefFn2 fn, const double* a, const double* b, double* out, int64_t n) {
  Map2<kWD>(Lookup2(fn).d, a, b, out, n, LoadD, StoreD);
}

void SleefPowScalar(const float* in, float e, float* out, int64_t n) {
#if defined(__AVX512F__)
  const VF ev = _mm512_set1_ps(e);
  Map<kWF>([ev](VF x) { return Sleef_powf16_u10(x, ev); }, in, out, n, LoadF, StoreF, 0.0f,
           static_cast<float (*)(float)>(nullptr));
#elif defined(__AVX__)
  const VF ev = _mm256_set1_ps(e);
  Map<kWF>([ev](VF x) { return Sleef_powf8_u10(x, ev); }, in, out, n, LoadF, StoreF, 0.0f,
           static_cast<float (*)(float)>(nullptr));
#else
  const VF ev = _mm_set1_ps(e);
  Map<kWF>([ev](VF x) { return Sleef_powf4_u10(x, ev); }, in, out, n, LoadF, StoreF, 0.0f,
           static_cast<float (*)(float)>(nullptr));
#endif
}

void SleefPowScalar(const double* in, double e, double* out, int64_t n) {
#if defined(__AVX512F__)
  const VD ev = _mm512_set1_pd(e);
  Map<kWD>([ev](VD x) { return Sleef_powd8_u10(x, ev); }, in, out, n, LoadD, StoreD, 0.0, static_cast<double (*)(double)>(nullptr));
#elif defined(__AVX__)
  const VD ev = _mm256_set1_pd(e);
  Map<kWD>([ev](VD x) { return Sleef_powd4_u10(x, ev); }, in, out, n, LoadD, StoreD, 0.0, static_cast<double (*)(double)>(nullptr));
#else
  const VD ev = _mm_set1_pd(e);
  Map<kWD>([ev](VD x) { return Sleef_powd2_u10(x, ev); }, in, out, n, LoadD, StoreD, 0.0, static_cast<double (*)(double)>(nullptr));
#endif
}

void SleefMap(SleefFn fn, const float* in, float* out, int64_t n) {
  const Entry e = Lookup(fn);
  Map<kWF>(e.f, in, out, n, LoadF, StoreF, e.limit_f, e.sf);
}

void SleefMap(SleefFn fn, const double* in, double* out, int64_t n) {
  const Entry e = Lookup(fn);
  Map<kWD>(e.d, in, out, n, LoadD, StoreD, e.limit_d, e.sd);
}

}  // namespace oneflow
