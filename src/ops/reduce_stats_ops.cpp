// Statistics reductions: var, std, var_mean, std_mean, logsumexp, nansum, nanmean, count_nonzero.
// Rows of the reduced elements (ops/reduce_util.h) are reduced with double accumulators (the
// data's own integer type widened to int64 for integer sums), vectorised within a row.
// var/std are two-pass (mean, then the sum of squared deviations): exact-ish for any offset of
// the data, at the cost of reading each row twice (rows of a few thousand stay in cache).
#include <cmath>
#include <limits>

#include "kernels/row_stats.h"
#include "ops/copy.h"
#include "ops/reduce_util.h"
#include "decl/add.h"
#include "decl/amax.h"
#include "decl/complex.h"
#include "decl/count_nonzero.h"
#include "decl/div.h"
#include "decl/empty.h"
#include "decl/exp.h"
#include "decl/imag.h"
#include "decl/isinf.h"
#include "decl/isnan.h"
#include "decl/log.h"
#include "decl/logical_not.h"
#include "decl/logsumexp.h"
#include "decl/nanmean.h"
#include "decl/nansum.h"
#include "decl/ne.h"
#include "decl/real.h"
#include "decl/reshape.h"
#include "decl/sqrt.h"
#include "decl/std.h"
#include "decl/std_mean.h"
#include "decl/sub.h"
#include "decl/sum.h"
#include "decl/var.h"
#include "decl/var_mean.h"
#include "decl/where.h"

namespace oneflow {

namespace {

template <typename T> using M = OpMath<T>;

double CorrectionOf(std::optional<bool> unbiased, const std::optional<Scalar>& correction) {
  OF_CHECK_TYPE(!(unbiased && correction)) << "cannot take both unbiased and correction";
  if (correction) return correction->ToDouble();
  return (!unbiased || *unbiased) ? 1.0 : 0.0;
}

// var or std (and optionally the mean) of every row.
std::tuple<Tensor, Tensor> VarStd(const Tensor& input, const std::optional<DimVector>& dim, std::optional<bool> unbiased,
                                  bool keepdim, const std::optional<Scalar>& correction, bool take_sqrt, bool want_mean) {
  if (IsComplex(input.dtype())) {
    // The mean squared distance |z - mean|^2 splits over the parts: var(z) = var(Re z) + var(Im z),
    // a real result; the mean stays complex.
    auto [vr, mr] = VarStd(Real(input), dim, unbiased, keepdim, correction, false, want_mean);
    auto [vi, mi] = VarStd(Imag(input), dim, unbiased, keepdim, correction, false, want_mean);
    const Tensor v = Add(vr, vi, Scalar(1));
    return {take_sqrt ? Sqrt(v) : v, want_mean ? Complex(mr, mi) : Tensor()};
  }
  OF_CHECK(IsFloating(input.dtype())) << "std and var only support floating point and complex dtypes, got "
                                      << DTypeName(input.dtype());
  const double c = CorrectionOf(unbiased, correction);
  const ReduceDims r = MakeReduceDims(input, dim, keepdim);
  Tensor out = Empty(r.out_shape, input.dtype(), input.device());
  Tensor mean = want_mean ? Empty(r.out_shape, input.dtype(), input.device()) : Tensor();
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return {out, mean};
  const Tensor rows = ReducedLast(input, r);
  const double dof = std::max(0.0, static_cast<double>(r.inner) - c);
  RowMoments(rows, r.outer, r.inner, dof, take_sqrt, out, mean);
  return {out, mean};
}

}  // namespace

Tensor Var(const Tensor& input, std::optional<DimVector> dim, std::optional<bool> unbiased, bool keepdim,
           std::optional<Scalar> correction) {
  OpScope scope("var");
  return std::get<0>(VarStd(input, dim, unbiased, keepdim, correction, false, false));
}

Tensor Std(const Tensor& input, std::optional<DimVector> dim, std::optional<bool> unbiased, bool keepdim,
           std::optional<Scalar> correction) {
  OpScope scope("std");
  return std::get<0>(VarStd(input, dim, unbiased, keepdim, correction, true, false));
}

std::tuple<Tensor, Tensor> VarMean(const Tensor& input, std::optional<DimVector> dim, std::optional<bool> unbiased,
                                   bool keepdim, std::optional<Scalar> correction) {
  OpScope scope("var_mean");
  return VarStd(input, dim, unbiased, keepdim, correction, false, true);
}

std::tuple<Tensor, Tensor> StdMean(const Tensor& input, std::optional<DimVector> dim, std::optional<bool> unbiased,
                                   bool keepdim, std::optional<Scalar> correction) {
  OpScope scope("std_mean");
  return VarStd(input, dim, unbiased, keepdim, correction, true, true);
}

// ---- logsumexp ----

namespace {

// Whether `dim` (logsumexp's, wrapped) includes input's innermost dim (or there is no dim to keep).
bool ReducesLastDim(const Tensor& input, const DimVector& dim) {
  if (input.dim() < 2 || dim.empty()) return true;
  for (int64_t d : dim)
    if (WrapDim(d, input.dim()) == input.dim() - 1) return true;
  return false;
}

}  // namespace

Tensor Logsumexp(const Tensor& input, const DimVector& dim, bool keepdim) {
  OpScope scope("logsumexp");
  const DType dt = IsFloating(input.dtype()) || IsComplex(input.dtype()) ? input.dtype() : DefaultFloatDType();
  const ReduceDims r = MakeReduceDims(input, dim, keepdim);
  Tensor out = Empty(r.out_shape, dt, input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  if (IsComplex(dt)) {
    // log(sum(exp(x - m))) + m with m the largest real part (an infinite one: 0), as PyTorch;
    // the complex exp/log/sum kernels do the work.
    if (input.numel() == 0) return Reshape(Log(Sum(input, dim, true, std::nullopt)), r.out_shape);
    const Tensor m = Amax(Real(input), dim, true);
    const Tensor shift = Where(Isinf(m), ScalarToTensor(Scalar(0), m.dtype()), m);
    const Tensor s = Sum(Exp(Sub(input, shift, Scalar(1))), dim, true, std::nullopt);
    return Reshape(Add(Log(s), shift, Scalar(1)), r.out_shape);
  }
  if (input.device().type == DeviceType::kCPU && input.numel() > 0 && !ReducesLastDim(input, dim)) {
    // Reduced dims before a kept innermost one (logsumexp(dim=0) of a matrix): the column maxima
    // and the sums of exponentials as whole-tensor passes (the reduce engine's line walks, SLEEF's
    // exp) instead of moving the reduced dims last in a copy and walking one row per output.
    const Tensor x = CastTo(input, dt);
    const Tensor m = Amax(x, dim, true);
    const Tensor shift = Where(Isinf(m), ScalarToTensor(Scalar(0), dt), m);  // all -inf (or +inf): 0
    const Tensor s = Sum(Exp(Sub(x, shift, Scalar(1))), dim, true, std::nullopt);
    return Reshape(Add(Log(s), shift, Scalar(1)), r.out_shape);
  }
  RowLogSumExp(ReducedLast(CastTo(input, dt), r), r.outer, r.inner, out);
  return out;
}

// ---- NaN-aware sums, count_nonzero ----

namespace {

struct SumCount {
  double sum;
  int64_t count;
};

template <typename T>
SumCount NanSumRange(const T* x, int64_t b, int64_t e) {
  double s = 0;
  int64_t c = 0;
#pragma omp simd reduction(+ : s, c)
  for (int64_t i = b; i < e; ++i) {
    const double v = static_cast<double>(static_cast<M<T>>(x[i]));
    const bool ok = v == v;
    s += ok ? v : 0.0;
    c += ok;
  }
  return {s, c};
}

template <typename T>
SumCount NanSumRow(const T* x, int64_t n, bool split) {
  if (!split) return NanSumRange(x, 0, n);
  return SplitRow<SumCount>(n, SumCount{0, 0}, [&](int64_t b, int64_t e) { return NanSumRange(x, b, e); },
                            [](SumCount a, SumCount b) { return SumCount{a.sum + b.sum, a.count + b.count}; });
}

template <typename T>
int64_t IntSumRange(const T* x, int64_t b, int64_t e) {
  int64_t s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = b; i < e; ++i) s += static_cast<int64_t>(x[i]);
  return s;
}

template <typename T>
int64_t NonzeroRange(const T* x, int64_t b, int64_t e) {
  int64_t c = 0;
#pragma omp simd reduction(+ : c)
  for (int64_t i = b; i < e; ++i) c += x[i] != T(0);
  return c;
}

template <typename R>
R SplitOrRange(int64_t n, bool split, const auto& range) {
  if (!split) return range(int64_t(0), n);
  return SplitRow<R>(n, R(0), range, [](R a, R b) { return a + b; });
}

// x with its NaNs replaced by 0 (the CUDA forms of nansum / nanmean).
Tensor NanZeroed(const Tensor& x) { return Where(Isnan(x), ScalarToTensor(Scalar(0), x.dtype()), x); }

}  // namespace

Tensor Nansum(const Tensor& input, std::optional<DimVector> dim, bool keepdim, std::optional<DType> dtype) {
  OpScope scope("nansum");
  const DType od = dtype ? *dtype : (IsFloating(input.dtype()) ? input.dtype() : DType::kInt64);
  const ReduceDims r = MakeReduceDims(input, dim, keepdim);
  Tensor out = Empty(r.out_shape, od, input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  // An explicit dtype converts first (as sum does); integers are summed exactly in int64.
  const Tensor x = dtype ? CastTo(input, od) : input;
  if (x.device().type == DeviceType::kCUDA)  // CUDA: the NaNs zeroed, then the sum kernel
    return Sum(IsFloating(x.dtype()) ? NanZeroed(x) : x, dim, keepdim, od);
  const Tensor rows = ReducedLast(x, r);
  DispatchAll(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    DispatchAll(od, [&](auto otag) {
      using O = typename std::decay_t<decltype(otag)>::type;
      O* o = out.data<O>();
      if constexpr (std::is_floating_point_v<M<T>>) {
        EachRow<T>(rows, r.outer, r.inner, [](const T* p, int64_t n, bool split) { return NanSumRow(p, n, split).sum; },
                   [&](int64_t i, double v) { o[i] = static_cast<O>(static_cast<M<O>>(v)); });
      } else {
        EachRow<T>(rows, r.outer, r.inner, [](const T* p, int64_t n, bool split) {
          return SplitOrRange<int64_t>(n, split, [p](int64_t b, int64_t e) { return IntSumRange(p, b, e); });
        }, [&](int64_t i, int64_t v) { o[i] = static_cast<O>(static_cast<M<O>>(v)); });
      }
    });
  });
  return out;
}

Tensor Nanmean(const Tensor& input, std::optional<DimVector> dim, bool keepdim, std::optional<DType> dtype) {
  OpScope scope("nanmean");
  OF_CHECK(IsFloating(input.dtype())) << "expected input to have floating point or complex dtype but got "
                                      << DTypeName(input.dtype());
  const DType od = dtype ? *dtype : input.dtype();
  OF_CHECK(IsFloating(od)) << "expected a floating point dtype, got " << DTypeName(od);
  const ReduceDims r = MakeReduceDims(input, dim, keepdim);
  Tensor out = Empty(r.out_shape, od, input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  if (input.device().type == DeviceType::kCUDA) {
    // CUDA: the sum of the non-NaN values over their count (0 / 0 = NaN where all are NaN).
    const Tensor x = CastTo(input, od);
    return Div(Sum(NanZeroed(x), dim, keepdim, od), Sum(LogicalNot(Isnan(x)), dim, keepdim, od), std::nullopt);
  }
  const Tensor rows = ReducedLast(CastTo(input, od), r);
  DispatchFloat(od, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* o = out.data<T>();
    EachRow<T>(rows, r.outer, r.inner, [](const T* p, int64_t n, bool split) { return NanSumRow(p, n, split); },
               [&](int64_t i, SumCount v) { o[i] = static_cast<T>(v.sum / static_cast<double>(v.count)); });
  });
  return out;
}

Tensor CountNonzero(const Tensor& input, std::optional<DimVector> dim) {
  OpScope scope("count_nonzero");
  const ReduceDims r = MakeReduceDims(input, dim, false);
  Tensor out = Empty(r.out_shape, DType::kInt64, input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  // CUDA and complex input: the nonzero flags summed (on the device; for complex, whose parts
  // the row counter does not know).
  if (input.device().type == DeviceType::kCUDA || IsComplex(input.dtype()))
    return Sum(Ne(input, ScalarToTensor(Scalar(0), input.dtype())), dim, false, DType::kInt64);
  const Tensor rows = ReducedLast(input, r);
  int64_t* o = out.data<int64_t>();
  DispatchAll(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    EachRow<T>(rows, r.outer, r.inner, [](const T* p, int64_t n, bool split) {
      return SplitOrRange<int64_t>(n, split, [p](int64_t b, int64_t e) { return NonzeroRange(p, b, e); });
    }, [&](int64_t i, int64_t v) { o[i] = v; });
  });
  return out;
}

}  // namespace oneflow
