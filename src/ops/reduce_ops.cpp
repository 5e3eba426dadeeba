// Reductions: sum mean prod amax amin aminmax all any argmax argmin max min.
#include <cmath>
#include <limits>

#include "kernels/reduce.h"
#include "ops/copy.h"
#include "ops/manual_ops.h"
#include "decl/all.h"
#include "decl/amax.h"
#include "decl/amin.h"
#include "decl/aminmax.h"
#include "decl/any.h"
#include "decl/argmax.h"
#include "decl/argmin.h"
#include "decl/empty.h"
#include "decl/mean.h"
#include "decl/prod.h"
#include "decl/reshape.h"
#include "decl/sum.h"

namespace oneflow {

namespace {

struct Plan {
  bool mask[kMaxDims] = {false};
  DimVector keep_shape, out_shape;
};

Plan MakeReducePlan(const Tensor& in, const std::optional<DimVector>& dim, bool keepdim) {
  Plan p;
  const int nd = in.dim();
  if (!dim || dim->empty()) {
    for (int d = 0; d < nd; ++d) p.mask[d] = true;
  } else {
    for (int64_t d : *dim) {
      int w = WrapDim(d, nd);
      if (nd == 0) continue;
      OF_CHECK(!p.mask[w]) << "dim " << w << " appears multiple times in the list of dims";
      p.mask[w] = true;
    }
  }
  for (int d = 0; d < nd; ++d) {
    p.keep_shape.push_back(p.mask[d] ? 1 : in.sizes()[d]);
    if (!p.mask[d]) p.out_shape.push_back(in.sizes()[d]);
    else if (keepdim) p.out_shape.push_back(1);
  }
  return p;
}

// Runs reducer R (templated on the input OpMath type) over `in` (already in compute dtype).
template <template <typename> class R, typename O = void>
Tensor Reduce(const Tensor& in, const Plan& p, DType out_dtype) {
  Tensor out = Empty(p.out_shape, out_dtype, in.device());
  if (in.device().type == DeviceType::kMeta) return out;
  Tensor keep = MakeView(out, p.keep_shape, ContiguousStrides(p.keep_shape), 0);
  ReduceGeom g = MakeReduceGeom(in, keep, p.mask);
  DispatchAll(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    DispatchAll(out_dtype, [&](auto otag) {
      using OT = typename std::decay_t<decltype(otag)>::type;
      if constexpr (R<T>::template kOutOk<OT>) RunReduce<T, OT>(in, keep, g, R<T>{});
    });
  });
  return out;
}

// Complex sum/mean/prod (Note [Complex dtypes]): accumulate in complex<double>.
template <typename T> struct CSumR {
  using A = std::complex<double>;
  A Init() const { return A(0); }
  A Step(A a, T x, int64_t) const { return a + A(x); }
  A Combine(A a, A b) const { return a + b; }
  T Finish(A a, int64_t) const { return T(a); }
};
template <typename T> struct CMeanR : CSumR<T> {
  T Finish(std::complex<double> a, int64_t n) const {
    return n == 0 ? T(NAN, NAN) : T(a / static_cast<double>(n));
  }
};
template <typename T> struct CProdR {
  using A = std::complex<double>;
  A Init() const { return A(1); }
  A Step(A a, T x, int64_t) const { return a * A(x); }
  A Combine(A a, A b) const { return a * b; }
  T Finish(A a, int64_t) const { return T(a); }
};

template <template <typename> class R>
Tensor ReduceComplex(const Tensor& in, const Plan& p) {
  Tensor out = Empty(p.out_shape, in.dtype(), in.device());
  if (in.device().type == DeviceType::kMeta) return out;
  Tensor keep = MakeView(out, p.keep_shape, ContiguousStrides(p.keep_shape), 0);
  ReduceGeom g = MakeReduceGeom(in, keep, p.mask);
  DispatchComplex(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    RunReduce<T, T>(in, keep, g, R<T>{});
  });
  return out;
}

template <typename T> using AccOf =
    std::conditional_t<std::is_floating_point_v<OpMath<T>>, double, int64_t>;

template <typename T> struct SumR {
  using A = AccOf<T>;
  template <typename O> static constexpr bool kOutOk =
      std::is_same_v<O, T> || (std::is_same_v<O, int64_t> && !std::is_floating_point_v<OpMath<T>>);
  A Init() const { return A(0); }
  A Step(A a, OpMath<T> x, int64_t) const { return a + static_cast<A>(x); }
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
  A Combine(A a, A b) const { return a + b; }
  auto Finish(A a, int64_t) const {
    if constexpr (std::is_floating_point_v<A>) return static_cast<OpMath<T>>(a); else return a;
  }
};
template <typename T> struct MeanR : SumR<T> {
  template <typename O> static constexpr bool kOutOk = std::is_same_v<O, T>;
  T Finish(AccOf<T> a, int64_t n) const {
    return static_cast<T>(static_cast<OpMath<T>>(n == 0 ? NAN : static_cast<double>(a) / n));
  }
};
template <typename T> struct ProdR {
  using A = AccOf<T>;
  template <typename O> static constexpr bool kOutOk = SumR<T>::template kOutOk<O>;
  A Init() const { return A(1); }
  A Step(A a, OpMath<T> x, int64_t) const { return a * static_cast<A>(x); }
  A Combine(A a, A b) const { return a * b; }
  auto Finish(A a, int64_t) const {
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
  A Init() const {
    using L = std::numeric_limits<M>;
    if constexpr (std::is_floating_point_v<M>) return kMax ? -L::infinity() : L::infinity();
    else return kMax ? L::lowest() : L::max();
  }
  static bool Better(M x, M cur) {
    if constexpr (std::is_floating_point_v<M>) { if (x != x) return cur == cur; if (cur != cur) return false; }
    return kMax ? x > cur : x < cur;
  }
  A Step(A a, M x, int64_t) const {
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
  A Combine(A a, A b) const { return Step(a, b, 0); }
  T Finish(A a, int64_t) const { return static_cast<T>(a); }
};
template <typename T> using MaxR = ExtremeR<T, true>;
template <typename T> using MinR = ExtremeR<T, false>;
template <typename T, bool kMax> struct ArgR {
  using M = OpMath<T>;
  template <typename O> static constexpr bool kOutOk = std::is_same_v<O, int64_t>;
  struct A { M v; int64_t i; };
  A Init() const { return {M(0), -1}; }
  A Step(A a, M x, int64_t i) const {
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
  A Combine(A a, A b) const { return b.i < 0 ? a : Step(a, b.v, b.i); }  // a covers lower indices
  int64_t Finish(A a, int64_t) const { return a.i < 0 ? 0 : a.i; }
};
template <typename T> using ArgmaxR = ArgR<T, true>;
template <typename T> using ArgminR = ArgR<T, false>;
template <typename T, bool kAll> struct BoolR {
  template <typename O> static constexpr bool kOutOk = std::is_same_v<O, bool>;
  bool Init() const { return kAll; }
  bool Step(bool a, OpMath<T> x, int64_t) const { return kAll ? (a && x != OpMath<T>(0)) : (a || x != OpMath<T>(0)); }
  bool Combine(bool a, bool b) const { return kAll ? a && b : a || b; }
  bool Finish(bool a, int64_t) const { return a; }
};
template <typename T> using AllR = BoolR<T, true>;
template <typename T> using AnyR = BoolR<T, false>;

DType SumDType(DType in, const std::optional<DType>& dtype) {
  if (dtype) return *dtype;
  return IsFloating(in) || IsComplex(in) ? in : DType::kInt64;
}

void CheckNonEmptyReduce(const Tensor& in, const Plan& p, const char* what) {
  if (in.numel() != 0) return;
  for (int d = 0; d < in.dim(); ++d)
    OF_CHECK(!(p.mask[d] && in.sizes()[d] == 0))
        << "Expected reduction dim " << d << " to have non-zero size (" << what
        << " of an empty tensor).";
  OF_CHECK(in.dim() > 0 || in.numel() > 0) << what << " of an empty tensor";
}

std::optional<DimVector> OneDim(std::optional<int64_t> d) {
  if (!d) return std::nullopt;
  return DimVector{*d};
}

}  // namespace

Tensor Sum(const Tensor& input, std::optional<DimVector> dim, bool keepdim, std::optional<DType> dtype) {
  OpScope scope("sum");
  Plan p = MakeReducePlan(input, dim, keepdim);
  DType od = SumDType(input.dtype(), dtype);
  DType cd = (dtype || IsFloating(od) || IsComplex(od)) ? od : input.dtype();  // an explicit dtype casts first
  if (IsComplex(cd)) return ReduceComplex<CSumR>(CastTo(input, cd), p);
  return Reduce<SumR>(CastTo(input, cd), p, od);
}

Tensor Mean(const Tensor& input, std::optional<DimVector> dim, bool keepdim, std::optional<DType> dtype) {
  OpScope scope("mean");
  DType od = dtype ? *dtype : input.dtype();
  OF_CHECK(IsFloating(od) || IsComplex(od)) << "could not infer output dtype. Input dtype must be either a floating "
                              "point or complex dtype. Got: " << DTypeName(od);
  Plan p = MakeReducePlan(input, dim, keepdim);
  if (IsComplex(od)) return ReduceComplex<CMeanR>(CastTo(input, od), p);
  return Reduce<MeanR>(CastTo(input, od), p, od);
}

Tensor Prod(const Tensor& input, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype) {
  OpScope scope("prod");
  Plan p = MakeReducePlan(input, OneDim(dim), keepdim && dim.has_value());
  DType od = SumDType(input.dtype(), dtype);
  DType cd = (dtype || IsFloating(od) || IsComplex(od)) ? od : input.dtype();  // an explicit dtype casts first
  if (IsComplex(cd)) return ReduceComplex<CProdR>(CastTo(input, cd), p);
  return Reduce<ProdR>(CastTo(input, cd), p, od);
}

Tensor Amax(const Tensor& input, std::optional<DimVector> dim, bool keepdim) {
  OpScope scope("amax");
  Plan p = MakeReducePlan(input, dim, keepdim);
  CheckNonEmptyReduce(input, p, "amax");
  return Reduce<MaxR>(input, p, input.dtype());
}

Tensor Amin(const Tensor& input, std::optional<DimVector> dim, bool keepdim) {
  OpScope scope("amin");
  Plan p = MakeReducePlan(input, dim, keepdim);
  CheckNonEmptyReduce(input, p, "amin");
  return Reduce<MinR>(input, p, input.dtype());
}

std::tuple<Tensor, Tensor> Aminmax(const Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope("aminmax");
  Plan p = MakeReducePlan(input, OneDim(dim), keepdim);
  CheckNonEmptyReduce(input, p, "aminmax");
  return {Reduce<MinR>(input, p, input.dtype()), Reduce<MaxR>(input, p, input.dtype())};
}

Tensor All(const Tensor& input, std::optional<DimVector> dim, bool keepdim) {
  OpScope scope("all");
  return Reduce<AllR>(input, MakeReducePlan(input, dim, keepdim), DType::kBool);
}

Tensor Any(const Tensor& input, std::optional<DimVector> dim, bool keepdim) {
  OpScope scope("any");
  return Reduce<AnyR>(input, MakeReducePlan(input, dim, keepdim), DType::kBool);
}

namespace {
template <template <typename> class R>
Tensor ArgReduce(const Tensor& input, std::optional<int64_t> dim, bool keepdim, const char* name) {
  // dim=None: index into the flattened tensor.
  Tensor in = dim ? input : Reshape(input, DimVector{-1});
  Plan p = MakeReducePlan(in, OneDim(dim ? std::optional<int64_t>(*dim) : std::optional<int64_t>(0)),
                          keepdim && dim.has_value());
  if (!dim && keepdim) {
    p.out_shape = DimVector(input.dim(), 1);
  }
  CheckNonEmptyReduce(in, p, name);
  return Reduce<R>(in, p, DType::kInt64);
}
}  // namespace

Tensor Argmax(const Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope("argmax");
  return ArgReduce<ArgmaxR>(input, dim, keepdim, "argmax");
}

Tensor Argmin(const Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope("argmin");
  return ArgReduce<ArgminR>(input, dim, keepdim, "argmin");
}

Tensor MaxAll(const Tensor& input) {
  OpScope scope("max");
  OF_CHECK(input.numel() > 0) << "Expected reduction dim to be specified for input.numel() == 0. "
                                 "Specify the reduction dim with the 'dim' argument.";
  return Reduce<MaxR>(input, MakeReducePlan(input, std::nullopt, false), input.dtype());
}

Tensor MinAll(const Tensor& input) {
  OpScope scope("min");
  OF_CHECK(input.numel() > 0) << "Expected reduction dim to be specified for input.numel() == 0. "
                                 "Specify the reduction dim with the 'dim' argument.";
  return Reduce<MinR>(input, MakeReducePlan(input, std::nullopt, false), input.dtype());
}

std::tuple<Tensor, Tensor> MaxDim(const Tensor& input, int64_t dim, bool keepdim) {
  OpScope scope("max");
  Plan p = MakeReducePlan(input, DimVector{dim}, keepdim);
  CheckNonEmptyReduce(input, p, "max");
  return {Reduce<MaxR>(input, p, input.dtype()), Reduce<ArgmaxR>(input, p, DType::kInt64)};
}

std::tuple<Tensor, Tensor> MinDim(const Tensor& input, int64_t dim, bool keepdim) {
  OpScope scope("min");
  Plan p = MakeReducePlan(input, DimVector{dim}, keepdim);
  CheckNonEmptyReduce(input, p, "min");
  return {Reduce<MinR>(input, p, input.dtype()), Reduce<ArgminR>(input, p, DType::kInt64)};
}

}  // namespace oneflow
