// CPU kernels of the row statistics (kernels/row_stats.h): double accumulators, vectorised within
// a row; rows over threads, or one long row split over threads.
#include "kernels/row_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/vec_math.h"
#include "ops/reduce_util.h"

namespace oneflow {

namespace {

template <typename T> using M = OpMath<T>;

template <typename T>
double SumRange(const T* x, int64_t b, int64_t e) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = b; i < e; ++i) s += static_cast<double>(static_cast<M<T>>(x[i]));
  return s;
}

template <typename T>
double SqDevRange(const T* x, int64_t b, int64_t e, double mean) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = b; i < e; ++i) {
    const double d = static_cast<double>(static_cast<M<T>>(x[i])) - mean;
    s += d * d;
  }
  return s;
}

struct Moments {
  double mean, m2;
};

template <typename T>
Moments MomentsOf(const T* x, int64_t n, bool split) {
  const auto plus = [](double a, double b) { return a + b; };
  const double sum = split ? SplitRow<double>(n, 0.0, [&](int64_t b, int64_t e) { return SumRange(x, b, e); }, plus)
                           : SumRange(x, 0, n);
  const double mean = sum / static_cast<double>(n);
  const double m2 = split ? SplitRow<double>(n, 0.0, [&](int64_t b, int64_t e) { return SqDevRange(x, b, e, mean); }, plus)
                          : SqDevRange(x, 0, n, mean);
  return {mean, m2};
}

void MomentsCpu(const Tensor& rows, int64_t outer, int64_t inner, double dof, bool take_sqrt, const Tensor& out,
                const Tensor& mean) {
  DispatchFloat(rows.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* o = out.data<T>();
    T* mo = mean.defined() ? mean.data<T>() : nullptr;
    EachRow<T>(rows, outer, inner, [](const T* x, int64_t n, bool split) { return MomentsOf(x, n, split); },
               [&](int64_t i, const Moments& m) {
                 const double v = m.m2 / dof;
                 o[i] = static_cast<T>(take_sqrt ? std::sqrt(v) : v);
                 if (mo) mo[i] = static_cast<T>(m.mean);
               });
  });
}

template <typename T>
M<T> MaxRange(const T* x, int64_t b, int64_t e) {
  M<T> m = -std::numeric_limits<M<T>>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t i = b; i < e; ++i) m = std::max(m, static_cast<M<T>>(x[i]));
  return m;
}

template <typename T>
double ExpSumRange(const T* x, int64_t b, int64_t e, M<T> shift) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = b; i < e; ++i) s += static_cast<double>(VecExp<M<T>>(static_cast<M<T>>(x[i]) - shift));
  return s;
}

template <typename T>
double LogSumExpRow(const T* x, int64_t n, bool split) {
  using MT = M<T>;
  const MT m = split ? SplitRow<MT>(n, -std::numeric_limits<MT>::infinity(),
                                    [&](int64_t b, int64_t e) { return MaxRange(x, b, e); },
                                    [](MT a, MT b) { return std::max(a, b); })
                     : MaxRange(x, 0, n);
  const MT shift = std::isinf(m) ? MT(0) : m;
  const double s = split ? SplitRow<double>(n, 0.0, [&](int64_t b, int64_t e) { return ExpSumRange(x, b, e, shift); },
                                            [](double a, double b) { return a + b; })
                         : ExpSumRange(x, 0, n, shift);
  return static_cast<double>(shift) + std::log(s);
}

void LogSumExpCpu(const Tensor& rows, int64_t outer, int64_t inner, const Tensor& out) {
  DispatchFloat(rows.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* o = out.data<T>();
    EachRow<T>(rows, outer, inner, [](const T* x, int64_t n, bool split) { return LogSumExpRow(x, n, split); },
               [&](int64_t i, double v) { o[i] = static_cast<T>(v); });
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::RowMomentsKernel>(DeviceType::kCPU, &MomentsCpu);
  kernels::RegisterKernel<kernels::RowLogSumExpKernel>(DeviceType::kCPU, &LogSumExpCpu);
  return true;
}();

}  // namespace

void RowMoments(const Tensor& rows, int64_t outer, int64_t inner, double dof, bool take_sqrt, const Tensor& out,
                const Tensor& mean) {
  kernels::CallKernel<kernels::RowMomentsKernel>(out.device(), rows, outer, inner, dof, take_sqrt, out, mean);
}

void RowLogSumExp(const Tensor& rows, int64_t outer, int64_t inner, const Tensor& out) {
  kernels::CallKernel<kernels::RowLogSumExpKernel>(out.device(), rows, outer, inner, out);
}

}  // namespace oneflow
