// CPU kernel of the row p-norms (kernels/norm.h): in double; one row split over threads when it is
// the only one, else rows spread over threads.
#include "kernels/norm.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/reduce_util.h"

namespace oneflow {

namespace {

template <typename T> using M = OpMath<T>;

template <typename T>
double PowerSum(const T* x, int64_t b, int64_t e, double p) {
  double s = 0;
  if (p == 2) {
#pragma omp simd reduction(+ : s)
    for (int64_t i = b; i < e; ++i) {
      const double v = static_cast<double>(static_cast<M<T>>(x[i]));
      s += v * v;
    }
  } else if (p == 1) {
#pragma omp simd reduction(+ : s)
    for (int64_t i = b; i < e; ++i) s += std::abs(static_cast<double>(static_cast<M<T>>(x[i])));
  } else if (p == 0) {
#pragma omp simd reduction(+ : s)
    for (int64_t i = b; i < e; ++i) s += static_cast<M<T>>(x[i]) != M<T>(0) ? 1.0 : 0.0;
  } else {
    for (int64_t i = b; i < e; ++i) s += std::pow(std::abs(static_cast<double>(static_cast<M<T>>(x[i]))), p);
  }
  return s;
}

template <typename T>
double Extreme(const T* x, int64_t b, int64_t e, bool is_max) {
  double m = is_max ? 0.0 : std::numeric_limits<double>::infinity();
  for (int64_t i = b; i < e; ++i) {
    const double a = std::abs(static_cast<double>(static_cast<M<T>>(x[i])));
    if (a != a) return a;
    m = is_max ? std::max(m, a) : std::min(m, a);
  }
  return m;
}

double CombineExtreme(double a, double b, bool is_max) {
  if (a != a) return a;
  if (b != b) return b;
  return is_max ? std::max(a, b) : std::min(a, b);
}

template <typename T>
double NormRow(const T* x, int64_t n, bool split, double p) {
  if (std::isinf(p)) {
    const bool is_max = p > 0;
    auto part = [&](int64_t b, int64_t e) { return Extreme(x, b, e, is_max); };
    const double init = is_max ? 0.0 : std::numeric_limits<double>::infinity();
    return split ? SplitRow<double>(n, init, part, [=](double a, double b) { return CombineExtreme(a, b, is_max); })
                 : part(0, n);
  }
  auto part = [&](int64_t b, int64_t e) { return PowerSum(x, b, e, p); };
  const double s = split ? SplitRow<double>(n, 0.0, part, [](double a, double b) { return a + b; }) : part(0, n);
  if (p == 2) return std::sqrt(s);
  if (p == 1 || p == 0) return s;
  return std::pow(s, 1.0 / p);
}

void RowNormCpu(const Tensor& rows, int64_t outer, int64_t inner, double p, const Tensor& out) {
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T* x = rows.data<T>();
    T* o = out.data<T>();
    if (outer == 1) {
      o[0] = static_cast<T>(NormRow(x, inner, true, p));
      return;
    }
    ForRows(outer, inner, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = static_cast<T>(NormRow(x + i * inner, inner, false, p));
    });
  });
}

// The CPU kernel in the registry (Note [Kernel registry]); the entry below reaches it.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::RowNormKernel>(DeviceType::kCPU, &RowNormCpu);
  return true;
}();

}  // namespace

void RowNorm(const Tensor& rows, int64_t outer, int64_t inner, double p, const Tensor& out) {
  kernels::CallKernel<kernels::RowNormKernel>(out.device(), rows, outer, inner, p, out);
}

}  // namespace oneflow
