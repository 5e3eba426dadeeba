// CPU kernels of the scans (kernels/scan.h). inner == 1: each line is a contiguous row, scanned
// sequentially, rows split over threads; a single long row is split into chunks (chunk totals
// first, then each chunk scanned from its offset). inner > 1: blocks of inner positions advance
// together through the n rows, vectorised across them. Accumulators are wider than the data as in
// PyTorch (double for float, int64 for integers).
#include "kernels/scan.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/functors.h"  // kIsCplx, ComplexLog1p: what functors/math.h builds on
#include "kernels/functors/math.h"

namespace oneflow {

namespace {

struct Geom {
  int64_t outer = 1, n = 1, inner = 1;
};

// (complex: complex<double>)
template <typename T> struct AccT { using type = std::conditional_t<std::is_floating_point_v<OpMath<T>>, double, int64_t>; };
template <typename T> struct AccT<std::complex<T>> { using type = std::complex<double>; };
template <typename T> using Acc = typename AccT<T>::type;
constexpr int64_t kBlock = 256;

// log(exp(a) + exp(b)); equal infinities (both -inf, both +inf) give themselves.
inline double LogAddExp(double a, double b) {
  if (a != a || b != b) return a + b;  // NaN propagates
  const double lo = std::min(a, b), hi = std::max(a, b);
  if (lo != hi || std::isfinite(lo)) return hi + std::log1p(std::exp(lo - hi));
  return a;
}

struct SumOp { template <typename A> A operator()(A a, A x) const { return a + x; } };
struct ProdOp { template <typename A> A operator()(A a, A x) const { return a * x; } };
struct LogAddExpOp { double operator()(double a, double x) const { return LogAddExp(a, x); } };
// Complex: the pointwise logaddexp's rule (the larger real part leads; PyTorch's).
struct ComplexLogAddExpOp {
  std::complex<double> operator()(std::complex<double> a, std::complex<double> x) const {
    return LogaddexpFunctor{}(a, x);
  }
};

// out[k] = step(out[k-1], in[k]) along n for every (outer, inner) line; `reverse` scans from the
// end. A: accumulator type, init: the identity of step.
template <typename T, typename A, typename Step>
void Scan(const T* in, T* out, const Geom& g, bool reverse, A init, Step step) {
  using M = OpMath<T>;
  const int64_t n = g.n;
  if (g.inner == 1) {
    auto scan_row = [&](const T* x, T* y, int64_t b, int64_t e, A acc) {
      if (!reverse) {
        for (int64_t k = b; k < e; ++k) y[k] = static_cast<T>(static_cast<M>((acc = step(acc, static_cast<A>(static_cast<M>(x[k]))))));
      } else {
        for (int64_t k = e - 1; k >= b; --k) y[k] = static_cast<T>(static_cast<M>((acc = step(acc, static_cast<A>(static_cast<M>(x[k]))))));
      }
    };
    const int nt = GetNumThreads();
    if (g.outer == 1 && nt > 1 && n >= 4 * kGrainSize && !omp_in_parallel()) {
      // One long row: chunk totals, their (directional) prefix, then each chunk from its offset.
      std::vector<A> total(nt, init);
#pragma omp parallel num_threads(nt)
      {
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        const int64_t per = (n + team - 1) / team;
        const int64_t b = std::min<int64_t>(n, t * per), e = std::min<int64_t>(n, b + per);
        A acc = init;
        for (int64_t k = b; k < e; ++k) acc = step(acc, static_cast<A>(static_cast<M>(in[k])));
        total[t] = acc;
#pragma omp barrier
        A offset = init;
        if (!reverse) { for (int s = 0; s < t; ++s) offset = step(offset, total[s]); }
        else { for (int s = team - 1; s > t; --s) offset = step(offset, total[s]); }
        scan_row(in, out, b, e, offset);
      }
      return;
    }
    ParallelFor(0, g.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) scan_row(in + r * n, out + r * n, 0, n, init);
    });
    return;
  }
  const int64_t nblk = (g.inner + kBlock - 1) / kBlock;
  ParallelFor(0, g.outer * nblk, std::max<int64_t>(1, kGrainSize / (n * std::min(g.inner, kBlock))),
              [&](int64_t b, int64_t e) {
    A acc[kBlock];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nblk, j0 = (t % nblk) * kBlock, len = std::min(kBlock, g.inner - j0);
      const int64_t base = o * n * g.inner + j0;
      for (int64_t j = 0; j < len; ++j) acc[j] = init;
      for (int64_t s = 0; s < n; ++s) {
        const int64_t k = reverse ? n - 1 - s : s;
        const T* x = in + base + k * g.inner;
        T* y = out + base + k * g.inner;
        for (int64_t j = 0; j < len; ++j) {
          acc[j] = step(acc[j], static_cast<A>(static_cast<M>(x[j])));
          y[j] = static_cast<T>(static_cast<M>(acc[j]));
        }
      }
    }
  });
}

void ScanCpu(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int kind, bool reverse) {
  const Geom g{outer, n, inner};
  DispatchAllAndComplex(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using A = Acc<T>;
    if (kind == 0) {
      Scan<T, A>(x.data<T>(), out.data<T>(), g, reverse, A(0), SumOp{});
    } else if (kind == 1) {
      Scan<T, A>(x.data<T>(), out.data<T>(), g, reverse, A(1), ProdOp{});
    } else if constexpr (std::is_floating_point_v<OpMath<T>>) {
      Scan<T, double>(x.data<T>(), out.data<T>(), g, reverse, -std::numeric_limits<double>::infinity(),
                      LogAddExpOp{});
    } else if constexpr (!std::is_integral_v<T>) {  // complex
      Scan<T, A>(x.data<T>(), out.data<T>(), g, reverse, A(-std::numeric_limits<double>::infinity(), 0.0),
                 ComplexLogAddExpOp{});
    }
  });
}

// PyTorch's rule: the running extreme moves to x when x is NaN, or when neither is NaN and
// x >= (cummax) / <= (cummin) the current one, so ties and NaNs take the latest index.
template <bool kMax, typename M>
inline bool TakesOver(M x, M cur) {
  if constexpr (std::is_floating_point_v<M>) {
    if (x != x) return true;
    if (cur != cur) return false;
  }
  return kMax ? x >= cur : x <= cur;
}

void CumExtremeCpu(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t outer, int64_t n,
                   int64_t inner, bool max) {
  const Geom g{outer, n, inner};
  DispatchAll(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* in = x.data<T>();
    T* vo = values.data<T>();
    int64_t* io = indices.data<int64_t>();
    const int64_t lines = g.outer * g.inner;
    ParallelFor(0, lines, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.n)), [&](int64_t b, int64_t e) {
      for (int64_t l = b; l < e; ++l) {
        const int64_t base = (l / g.inner) * g.n * g.inner + l % g.inner;
        M cur = static_cast<M>(in[base]);
        int64_t idx = 0;
        for (int64_t k = 0; k < g.n; ++k) {
          const int64_t p = base + k * g.inner;
          const M v = static_cast<M>(in[p]);
          if ((max ? TakesOver<true>(v, cur) : TakesOver<false>(v, cur))) cur = v, idx = k;
          vo[p] = static_cast<T>(cur);
          io[p] = idx;
        }
      }
    });
  });
}

// Sums are formed per line in OpMath (float for 16-bit types) and rounded once.
void CumExtremeBackwardCpu(const Tensor& g, const Tensor& idx, const Tensor& out, int64_t outer, int64_t n,
                           int64_t inner) {
  const Geom geo{outer, n, inner};
  const int64_t* ip = idx.data<int64_t>();
  DispatchFloat(g.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* gp = g.data<T>();
    T* op = out.data<T>();
    // Sums are formed in OpMath (float for 16-bit types) and rounded once.
    ParallelFor(0, geo.outer * geo.inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, geo.n)),
                [&](int64_t b, int64_t e) {
      std::vector<M> acc(geo.n);
      for (int64_t l = b; l < e; ++l) {
        const int64_t base = (l / geo.inner) * geo.n * geo.inner + l % geo.inner;
        std::fill(acc.begin(), acc.end(), M(0));
        for (int64_t k = 0; k < geo.n; ++k) acc[ip[base + k * geo.inner]] += static_cast<M>(gp[base + k * geo.inner]);
        for (int64_t k = 0; k < geo.n; ++k) op[base + k * geo.inner] = static_cast<T>(acc[k]);
      }
    });
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::ScanKernel>(DeviceType::kCPU, &ScanCpu);
  kernels::RegisterKernel<kernels::CumExtremeKernel>(DeviceType::kCPU, &CumExtremeCpu);
  kernels::RegisterKernel<kernels::CumExtremeBackwardKernel>(DeviceType::kCPU, &CumExtremeBackwardCpu);
  return true;
}();

}  // namespace

void ScanLines(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int kind, bool reverse) {
  kernels::CallKernel<kernels::ScanKernel>(out.device(), x, out, outer, n, inner, kind, reverse);
}

void CumExtremeLines(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t outer, int64_t n,
                     int64_t inner, bool max) {
  kernels::CallKernel<kernels::CumExtremeKernel>(values.device(), x, values, indices, outer, n, inner, max);
}

void CumExtremeBackwardLines(const Tensor& g, const Tensor& idx, const Tensor& out, int64_t outer, int64_t n,
                             int64_t inner) {
  kernels::CallKernel<kernels::CumExtremeBackwardKernel>(out.device(), g, idx, out, outer, n, inner);
}

}  // namespace oneflow
