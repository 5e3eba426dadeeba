// Scans along one dim: cumsum, cumprod, logcumsumexp (and their reverse forms used by the
// backward formulas), cummax / cummin, and cummaxmin_backward.
// The input is viewed as [outer, n, inner] (n: the scanned dim). inner == 1: each line is a
// contiguous row, scanned sequentially, rows split over threads; a single long row is split into
// chunks (chunk totals first, then each chunk scanned from its offset). inner > 1: blocks of
// inner positions advance together through the n rows, vectorised across them.
// Accumulators are wider than the data as in PyTorch (double for float, int64 for integers).
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/functors.h"  // kIsCplx, ComplexLog1p: what functors/math.h builds on
#include "kernels/functors/math.h"
#include "ops/copy.h"
#include "ops/pointwise.h"
#include "decl/contiguous.h"
#include "decl/cummax.h"
#include "decl/cummaxmin_backward.h"
#include "decl/cummin.h"
#include "decl/cumprod.h"
#include "decl/cumsum.h"
#include "decl/empty.h"
#include "decl/logcumsumexp.h"
#include "decl/reverse_cumsum.h"
#include "decl/reverse_logcumsumexp.h"

#ifdef ONEFLOW_WITH_CUDA
#include "cuda/index.h"
#include "cuda/ops.h"
#include "ops/index_util.h"
#endif

namespace oneflow {

namespace {

struct Geom {
  int64_t outer = 1, n = 1, inner = 1;
};

Geom GeomOf(const DimVector& sizes, int d) {
  Geom g;
  for (int i = 0; i < sizes.size(); ++i) {
    if (i < d) g.outer *= sizes[i];
    else if (i == d) g.n = sizes[i];
    else g.inner *= sizes[i];
  }
  return g;
}

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

enum class Kind { kSum, kProd, kLogSumExp };  // 0, 1, 2 as cuda::Scan's kind

// dtype rule of cumsum / cumprod: an explicit dtype, else integers (and bool) become int64.
DType ScanDType(DType in, const std::optional<DType>& dtype, Kind kind) {
  if (dtype) return *dtype;
  if (kind == Kind::kLogSumExp) return in;
  return IsFloating(in) || IsComplex(in) ? in : DType::kInt64;
}

Tensor RunScan(const Tensor& input, int64_t dim, const std::optional<DType>& dtype, Kind kind, bool reverse) {
  // Complex: no device kernel yet; the no-kernel error sends a CUDA tensor through the host
  // fallback (Note [Host fallback]), which runs the CPU loop below on a copy.
  if (IsComplex(input.dtype()) && input.device().type == DeviceType::kCUDA)
    OF_THROW_NO_KERNEL(input.device().index) << "complex scans have no CUDA kernel";
  const int d = WrapDim(dim, input.dim());
  const DType dt = ScanDType(input.dtype(), dtype, kind);
  if (kind == Kind::kLogSumExp) {
    OF_CHECK(IsFloating(dt) || IsComplex(dt)) << "expected a floating point or complex tensor, got " << DTypeName(dt);
  }
  Tensor out = Empty(input.sizes(), dt, input.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const Tensor x = Contiguous(CastTo(input, dt));
  const Geom g = GeomOf(input.sizes(), d);
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    cuda::Scan(x, out, g.outer, g.n, g.inner, static_cast<int>(kind), reverse);  // Kind's order
    return out;
  }
#endif
  DispatchAllAndComplex(dt, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using A = Acc<T>;
    if (kind == Kind::kSum) {
      Scan<T, A>(x.data<T>(), out.data<T>(), g, reverse, A(0), SumOp{});
    } else if (kind == Kind::kProd) {
      Scan<T, A>(x.data<T>(), out.data<T>(), g, reverse, A(1), ProdOp{});
    } else if constexpr (std::is_floating_point_v<OpMath<T>>) {
      Scan<T, double>(x.data<T>(), out.data<T>(), g, reverse, -std::numeric_limits<double>::infinity(),
                      LogAddExpOp{});
    } else if constexpr (!std::is_integral_v<T>) {  // complex
      Scan<T, A>(x.data<T>(), out.data<T>(), g, reverse, A(-std::numeric_limits<double>::infinity(), 0.0),
                 ComplexLogAddExpOp{});
    }
  });
  return out;
}

// In place the result keeps self's dtype: an explicit other dtype is refused, and so is a bool
// self with anything to scan (its sums are not bools), as PyTorch does.
void CheckScanInplace(const Tensor& self, int64_t dim, const std::optional<DType>& dtype) {
  WrapDim(dim, self.dim());
  OF_CHECK(!dtype || *dtype == self.dtype())
      << "Bad in-place call: input tensor dtype " << DTypeName(self.dtype()) << " and output tensor dtype "
      << DTypeName(*dtype) << " should match";
  OF_CHECK(self.dtype() != DType::kBool || self.dim() == 0 || self.numel() == 0)
      << "not implemented for 'Bool' tensors in place";
}

Tensor& ScanInplace(Tensor& self, const Tensor& result) {
  CheckInplaceResult(self, result.dtype(), self.sizes());
  CopyInto(self, result);
  self.BumpVersion();
  return self;
}

}  // namespace

Tensor Cumsum(const Tensor& input, int64_t dim, std::optional<DType> dtype) {
  OpScope scope("cumsum");
  return RunScan(input, dim, dtype, Kind::kSum, false);
}

Tensor& Cumsum_(Tensor& input, int64_t dim, std::optional<DType> dtype) {
  OpScope scope("cumsum_");
  CheckScanInplace(input, dim, dtype);
  return ScanInplace(input, RunScan(input, dim, dtype ? dtype : std::optional<DType>(input.dtype()), Kind::kSum, false));
}

Tensor Cumprod(const Tensor& input, int64_t dim, std::optional<DType> dtype) {
  OpScope scope("cumprod");
  return RunScan(input, dim, dtype, Kind::kProd, false);
}

Tensor& Cumprod_(Tensor& input, int64_t dim, std::optional<DType> dtype) {
  OpScope scope("cumprod_");
  CheckScanInplace(input, dim, dtype);
  return ScanInplace(input, RunScan(input, dim, dtype ? dtype : std::optional<DType>(input.dtype()), Kind::kProd, false));
}

Tensor Logcumsumexp(const Tensor& input, int64_t dim) {
  OpScope scope("logcumsumexp");
  return RunScan(input, dim, std::nullopt, Kind::kLogSumExp, false);
}

Tensor ReverseCumsum(const Tensor& input, int64_t dim) {
  OpScope scope("reverse_cumsum");
  return RunScan(input, dim, std::nullopt, Kind::kSum, true);
}

Tensor ReverseLogcumsumexp(const Tensor& input, int64_t dim) {
  OpScope scope("reverse_logcumsumexp");
  return RunScan(input, dim, std::nullopt, Kind::kLogSumExp, true);
}

// ---- cummax / cummin ----

namespace {

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

template <bool kMax>
std::tuple<Tensor, Tensor> CumExtreme(const Tensor& input, int64_t dim) {
  const int d = WrapDim(dim, input.dim());
  Tensor values = Empty(input.sizes(), input.dtype(), input.device());
  Tensor indices = Empty(input.sizes(), DType::kInt64, input.device());
  if (values.device().type == DeviceType::kMeta || values.numel() == 0) return {values, indices};
  const Tensor x = Contiguous(input);
  const Geom g = GeomOf(input.sizes(), d);
#ifdef ONEFLOW_WITH_CUDA
  if (values.device().type == DeviceType::kCUDA) {
    cuda::CumExtreme(x, values, indices, g.outer, g.n, g.inner, kMax);
    return {values, indices};
  }
#endif
  DispatchAll(input.dtype(), [&](auto tag) {
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
          if (TakesOver<kMax>(v, cur)) cur = v, idx = k;
          vo[p] = static_cast<T>(cur);
          io[p] = idx;
        }
      }
    });
  });
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> Cummax(const Tensor& input, int64_t dim) {
  OpScope scope("cummax");
  return CumExtreme<true>(input, dim);
}

std::tuple<Tensor, Tensor> Cummin(const Tensor& input, int64_t dim) {
  OpScope scope("cummin");
  return CumExtreme<false>(input, dim);
}

// zeros_like(grad).scatter_add(dim, indices, grad): each position gets the gradients of the
// outputs whose running extreme it was.
Tensor CummaxminBackward(const Tensor& grad, const Tensor& indices, int64_t dim) {
  OpScope scope("cummaxmin_backward");
  OF_CHECK(grad.sizes() == indices.sizes()) << "grad and indices must have the same shape, got "
                                            << ShapeStr(grad.sizes()) << " and " << ShapeStr(indices.sizes());
  OF_CHECK(indices.dtype() == DType::kInt64) << "indices must be int64, got " << DTypeName(indices.dtype());
  const int d = WrapDim(dim, grad.dim());
  Tensor out = Empty(grad.sizes(), grad.dtype(), grad.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const Tensor g = Contiguous(grad), idx = Contiguous(indices);
  const Geom geo = GeomOf(grad.sizes(), d);
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {  // zeros, then the scatter-add kernel (atomic adds)
    if (auto bad = FindOutOfRange(idx, 0, geo.n))
      OF_THROW(kRuntime) << "index " << *bad << " is out of bounds for dim " << d << " with size " << geo.n;
    // 16-bit gradients are summed in float and rounded once, as the CPU loop below does: 16-bit
    // atomic adds round at every add, which loses digits where large gradients cancel.
    const bool narrow = grad.dtype() == DType::kFloat16 || grad.dtype() == DType::kBFloat16;
    Tensor acc = narrow ? Empty(grad.sizes(), DType::kFloat32, grad.device()) : out;
    FillWith(acc, Scalar(0));
    cuda::ScatterDim(acc, d, idx, narrow ? CastTo(g, DType::kFloat32) : g, true);
    return narrow ? CastTo(acc, grad.dtype()) : out;
  }
#endif
  const int64_t* ip = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i)
    OF_CHECK(ip[i] >= 0 && ip[i] < geo.n) << "index " << ip[i] << " is out of bounds for dim "
                                                << d << " with size " << geo.n;
  DispatchFloat(grad.dtype(), [&](auto tag) {
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
  return out;
}

}  // namespace oneflow
