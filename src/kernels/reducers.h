// The reducers of the reduce engine (sum, mean, prod, max/min, argmax/argmin, all/any), shared by
// the CPU loops (kernels/reduce.h, RunReduce) and the CUDA reduce kernel (src/cuda/reduce.cu;
// Note [CUDA reductions] in kernels/reduce.h). A reducer has Acc Init(), Acc Step(Acc, M x, int64 i),
// Acc Combine(Acc, Acc) (partials in any order: the CUDA tree does not keep index order) and
// Finish(Acc, int64 count); those are OF_HD. StepContig, the CPU's vectorised form of a
// contiguous run, is host-only.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dtype.h"
#include "core/hd.h"

namespace oneflow::reducers {

template <typename T> using AccOf =
    std::conditional_t<std::is_floating_point_v<OpMath<T>>, double, int64_t>;

template <typename T> struct SumLineBlock {};
// Float-math sums (float, half, bfloat16) add lines of outputs in float blocks of this many lines
// (RunReduce's lines loop); double and integer sums keep a double / int64 step per element.
template <typename T> requires std::is_same_v<OpMath<T>, float> struct SumLineBlock<T> {
  static constexpr int64_t kLineBlock = 64;
};

template <typename T> struct SumR : SumLineBlock<T> {
  using A = AccOf<T>;
  template <typename O> static constexpr bool kOutOk =
      std::is_same_v<O, T> || (std::is_same_v<O, int64_t> && !std::is_floating_point_v<OpMath<T>>);
  OF_HD A Init() const { return A(0); }
  OF_HD A Step(A a, OpMath<T> x, int64_t) const { return a + static_cast<A>(x); }
  A StepContig(A a, const T* p, int64_t b, int64_t e) const {
    if constexpr (std::is_same_v<T, float>) {
      // float lanes over short blocks (one AVX-512 register of partial sums), each block's
      // total carried in double: vector speed, error bounded by the 4096-element block.
      constexpr int kLanes = 16, kBlock = 4096;
      for (int64_t blk = b; blk < e; blk += kBlock) {
        const int64_t end = std::min<int64_t>(e, blk + kBlock);
        float lane[kLanes] = {};
        int64_t i = blk;
        for (; i + kLanes <= end; i += kLanes)
          for (int k = 0; k < kLanes; ++k) lane[k] += p[i + k];
        float tail = 0.f;
        for (; i < end; ++i) tail += p[i];
        double s = tail;
        for (int k = 0; k < kLanes; ++k) s += lane[k];
        a += s;
      }
      return a;
    }
    constexpr int kLanes = 16;
    A lane[kLanes] = {};
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int k = 0; k < kLanes; ++k) lane[k] += static_cast<A>(static_cast<OpMath<T>>(p[i + k]));
    for (; i < e; ++i) a += static_cast<A>(static_cast<OpMath<T>>(p[i]));
    for (int k = 0; k < kLanes; ++k) a += lane[k];
    return a;
  }
  OF_HD A Combine(A a, A b) const { return a + b; }
  OF_HD auto Finish(A a, int64_t) const {
    if constexpr (std::is_floating_point_v<A>) return static_cast<OpMath<T>>(a); else return a;
  }
};
template <typename T> struct MeanR : SumR<T> {
  template <typename O> static constexpr bool kOutOk = std::is_same_v<O, T>;
  OF_HD T Finish(AccOf<T> a, int64_t n) const {
    return static_cast<T>(static_cast<OpMath<T>>(n == 0 ? NAN : static_cast<double>(a) / n));
  }
};
template <typename T> struct ProdR {
  using A = AccOf<T>;
  template <typename O> static constexpr bool kOutOk = SumR<T>::template kOutOk<O>;
  OF_HD A Init() const { return A(1); }
  OF_HD A Step(A a, OpMath<T> x, int64_t) const { return a * static_cast<A>(x); }
  // Partial products in lanes (one multiply chain per element was 9x PyTorch's time on rows of
  // 1K floats: the chain's latency, not the data, set the pace). Products of floats in double
  // lanes round differently from one chain only beyond float's precision.
  A StepContig(A a, const T* p, int64_t b, int64_t e) const {
    constexpr int kLanes = 16;
    A lane[kLanes];
    for (int k = 0; k < kLanes; ++k) lane[k] = A(1);
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int k = 0; k < kLanes; ++k) lane[k] *= static_cast<A>(static_cast<OpMath<T>>(p[i + k]));
    for (; i < e; ++i) a *= static_cast<A>(static_cast<OpMath<T>>(p[i]));
    for (int k = 0; k < kLanes; ++k) a *= lane[k];
    return a;
  }
  OF_HD A Combine(A a, A b) const { return a * b; }
  OF_HD auto Finish(A a, int64_t) const {
    if constexpr (std::is_floating_point_v<A>) return static_cast<OpMath<T>>(a); else return a;
  }
};
// Max/min propagate NaN like PyTorch. The accumulator starts at the identity (-inf / +inf, or
// the integer limits): callers refuse empty reduced ranges first, so no "seen a value" flag is
// needed and Step is a branch-free select that vectorises (in rows and in lines of outputs).
template <typename T, bool kMax> struct ExtremeR {
  using M = OpMath<T>;
  using A = M;
  template <typename O> static constexpr bool kOutOk = std::is_same_v<O, T>;
  OF_HD A Init() const {
    using L = std::numeric_limits<M>;
    if constexpr (std::is_floating_point_v<M>) return kMax ? -L::infinity() : L::infinity();
    else return kMax ? L::lowest() : L::max();
  }
  OF_HD static bool Better(M x, M cur) {
    if constexpr (std::is_floating_point_v<M>) { if (x != x) return cur == cur; if (cur != cur) return false; }
    return kMax ? x > cur : x < cur;
  }
  OF_HD A Step(A a, M x, int64_t) const {
    if constexpr (std::is_floating_point_v<M>) return (x != x || (kMax ? x > a : x < a)) ? x : a;
    else return kMax ? (x > a ? x : a) : (x < a ? x : a);
  }
  A StepContig(A a, const T* p, int64_t b, int64_t e) const {
    // A plain max/min reduction plus an "any NaN" flag: the form GCC vectorises (a NaN-aware
    // select chain stays scalar, 8x slower).
    M m = a;
    int nan = 0;
    if constexpr (kMax) {
#pragma omp simd reduction(max : m) reduction(| : nan)
      for (int64_t i = b; i < e; ++i) {
        const M x = static_cast<M>(p[i]);
        m = m < x ? x : m;
        nan |= (x != x);
      }
    } else {
#pragma omp simd reduction(min : m) reduction(| : nan)
      for (int64_t i = b; i < e; ++i) {
        const M x = static_cast<M>(p[i]);
        m = x < m ? x : m;
        nan |= (x != x);
      }
    }
    if constexpr (std::is_floating_point_v<M>)
      if (nan) return std::numeric_limits<M>::quiet_NaN();
    return Step(a, m, 0);
  }
  OF_HD A Combine(A a, A b) const { return Step(a, b, 0); }
  OF_HD T Finish(A a, int64_t) const { return static_cast<T>(a); }
};
template <typename T> using MaxR = ExtremeR<T, true>;
template <typename T> using MinR = ExtremeR<T, false>;
template <typename T, bool kMax> struct ArgR {
  using M = OpMath<T>;
  static constexpr bool kUsesIndex = true;  // Step keeps the flat reduced index
  template <typename O> static constexpr bool kOutOk = std::is_same_v<O, int64_t>;
  struct A { M v; int64_t i; };
  OF_HD A Init() const { return {M(0), -1}; }
  OF_HD A Step(A a, M x, int64_t i) const {
    return (a.i < 0 || ExtremeR<T, kMax>::Better(x, a.v)) ? A{x, i} : a;
  }
  A StepContig(A a, const T* p, int64_t b, int64_t e) const {
    // The vectorised extreme first, then the first index holding it (or the first NaN).
    if (b >= e) return a;
    const ExtremeR<T, kMax> ext;
    const M m = ext.StepContig(ext.Init(), p, b, e);
    int64_t i = b;
    if (m != m) {
      while (static_cast<M>(p[i]) == static_cast<M>(p[i])) ++i;
    } else {
      while (static_cast<M>(p[i]) != m) ++i;
    }
    return Combine(a, A{m, i});
  }
  // Partials may come in any order (the CUDA kernel's tree pairs chunk 0 with chunk 128, then
  // with chunk 64): the better value wins, and of equal values (or two NaNs) the lower index, so
  // the result is always the first index of the extreme, as in PyTorch.
  OF_HD A Combine(A a, A b) const {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    if (ExtremeR<T, kMax>::Better(b.v, a.v)) return b;
    if (ExtremeR<T, kMax>::Better(a.v, b.v)) return a;
    return a.i <= b.i ? a : b;
  }
  OF_HD int64_t Finish(A a, int64_t) const { return a.i < 0 ? 0 : a.i; }
};
template <typename T> using ArgmaxR = ArgR<T, true>;
template <typename T> using ArgminR = ArgR<T, false>;
template <typename T, bool kAll> struct BoolR {
  template <typename O> static constexpr bool kOutOk = std::is_same_v<O, bool>;
  OF_HD bool Init() const { return kAll; }
  OF_HD bool Step(bool a, OpMath<T> x, int64_t) const { return kAll ? (a && x != OpMath<T>(0)) : (a || x != OpMath<T>(0)); }
  OF_HD bool Combine(bool a, bool b) const { return kAll ? a && b : a || b; }
  OF_HD bool Finish(bool a, int64_t) const { return a; }
};
template <typename T> using AllR = BoolR<T, true>;
template <typename T> using AnyR = BoolR<T, false>;

// Complex sum / mean / prod (Note [Complex dtypes]): accumulated in complex double. T is
// std::complex on the CPU and libcu++'s complex in CUDA kernels (Note [Complex on CUDA], which
// specialises ComplexAcc); parts are converted one by one, which both types allow.
template <typename T> struct ComplexAcc { using type = std::complex<double>; };

template <typename T> struct CSumR {
  using A = typename ComplexAcc<T>::type;
  OF_HD A Init() const { return A(0); }
  OF_HD A Step(A a, T x, int64_t) const { return a + A(x.real(), x.imag()); }
  OF_HD A Combine(A a, A b) const { return a + b; }
  OF_HD T Finish(A a, int64_t) const { return Narrow(a); }
  OF_HD static T Narrow(A a) {
    using V = typename T::value_type;
    return T(static_cast<V>(a.real()), static_cast<V>(a.imag()));
  }
};
template <typename T> struct CMeanR : CSumR<T> {
  OF_HD T Finish(typename CSumR<T>::A a, int64_t n) const {
    return n == 0 ? T(NAN, NAN) : CSumR<T>::Narrow(a / static_cast<double>(n));
  }
};
template <typename T> struct CProdR {
  using A = typename ComplexAcc<T>::type;
  OF_HD A Init() const { return A(1); }
  OF_HD A Step(A a, T x, int64_t) const { return a * A(x.real(), x.imag()); }
  OF_HD A Combine(A a, A b) const { return a * b; }
  OF_HD T Finish(A a, int64_t) const { return CSumR<T>::Narrow(a); }
};

}  // namespace oneflow::reducers
