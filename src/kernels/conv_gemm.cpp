// Convolution as im2col + gemm (OpenBLAS for float32/float64, a reference loop for integers).
// Per image and group: y[cyg, Y] = w_g[cyg, cxg*K] @ col[cxg*K, Y], where col holds, for every
// (input channel, kernel offset) row, the input values each output position reads (0 in the
// padding). The data gradient is the transpose (gemm into col, then col2im adds the rows back),
// the weight gradient dw_g += dy[cyg, Y] @ col^T. 1x1 stride-1 convolutions skip im2col.
#include <cblas.h>

#include <cstring>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/conv.h"

namespace oneflow {

namespace {

// Row-major C[m,n] = A[m,k] (ta: A stored [k,m]) @ B[k,n] (tb: B stored [n,k]) + beta * C.
template <typename T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, bool accumulate, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto cta = ta ? CblasTrans : CblasNoTrans, ctb = tb ? CblasTrans : CblasNoTrans;
    const T beta = accumulate ? T(1) : T(0);
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, cta, ctb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
    else
      cblas_dgemm(CblasRowMajor, cta, ctb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
  } else {
    // Integers wrap like PyTorch's (two's complement sums do not depend on the order).
    for (int64_t i = 0; i < m; ++i) {
      T* ci = c + i * ldc;
      if (!accumulate) std::fill(ci, ci + n, T(0));
      for (int64_t p = 0; p < k; ++p) {
        const T av = ta ? a[p * lda + i] : a[i * lda + p];
        if (!tb) {
          const T* bp = b + p * ldb;
          for (int64_t j = 0; j < n; ++j) ci[j] = static_cast<T>(ci[j] + av * bp[j]);
        } else {
          for (int64_t j = 0; j < n; ++j) ci[j] = static_cast<T>(ci[j] + av * b[j * ldb + p]);
        }
      }
    }
  }
}

// First and one-past-last output index o in [0, ny) whose input o*s + off lies in [0, nx).
inline void ValidRange(int64_t ny, int64_t nx, int64_t s, int64_t off, int64_t* lo, int64_t* hi) {
  // o*s + off >= 0  <=>  o >= ceil(-off / s);  o*s + off < nx  <=>  o < ceil((nx - off) / s)
  auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  *lo = std::min(ny, std::max<int64_t>(0, ceil_div(-off, s)));
  *hi = std::min(ny, std::max(*lo, ceil_div(nx - off, s)));
}

// One col row (kernel offset kk of one input channel xc): for each output position the input
// element it reads, 0 in the padding. The innermost run is a plain (or strided) copy between
// precomputed bounds, with no per-element branch.
template <typename T>
void Im2ColRow(const ConvGeom& g, const T* xc, int64_t kk, T* dst) {
  const int64_t k2 = kk % g.ks[2], k1 = (kk / g.ks[2]) % g.ks[1], k0 = kk / (g.ks[1] * g.ks[2]);
  const int64_t off0 = k0 * g.dil[0] - g.pad[0], off1 = k1 * g.dil[1] - g.pad[1], off2 = k2 * g.dil[2] - g.pad[2];
  int64_t lo2, hi2;
  ValidRange(g.ys[2], g.xs[2], g.stride[2], off2, &lo2, &hi2);
  const int64_t s2 = g.stride[2];
  for (int64_t o0 = 0; o0 < g.ys[0]; ++o0) {
    const int64_t i0 = o0 * g.stride[0] + off0;
    for (int64_t o1 = 0; o1 < g.ys[1]; ++o1, dst += g.ys[2]) {
      const int64_t i1 = o1 * g.stride[1] + off1;
      if (i0 < 0 || i0 >= g.xs[0] || i1 < 0 || i1 >= g.xs[1]) {
        std::fill(dst, dst + g.ys[2], T(0));
        continue;
      }
      const T* src = xc + (i0 * g.xs[1] + i1) * g.xs[2] + off2;
      std::fill(dst, dst + lo2, T(0));
      if (s2 == 1) {
        std::memcpy(dst + lo2, src + lo2, (hi2 - lo2) * sizeof(T));
      } else {
        for (int64_t o2 = lo2; o2 < hi2; ++o2) dst[o2] = src[o2 * s2];
      }
      std::fill(dst + hi2, dst + g.ys[2], T(0));
    }
  }
}

// The adjoint of Im2ColRow: adds one col row back into the input channel it was read from.
template <typename T>
void Col2ImRow(const ConvGeom& g, const T* src, int64_t kk, T* xc) {
  const int64_t k2 = kk % g.ks[2], k1 = (kk / g.ks[2]) % g.ks[1], k0 = kk / (g.ks[1] * g.ks[2]);
  const int64_t off0 = k0 * g.dil[0] - g.pad[0], off1 = k1 * g.dil[1] - g.pad[1], off2 = k2 * g.dil[2] - g.pad[2];
  int64_t lo2, hi2;
  ValidRange(g.ys[2], g.xs[2], g.stride[2], off2, &lo2, &hi2);
  const int64_t s2 = g.stride[2];
  for (int64_t o0 = 0; o0 < g.ys[0]; ++o0) {
    const int64_t i0 = o0 * g.stride[0] + off0;
    for (int64_t o1 = 0; o1 < g.ys[1]; ++o1, src += g.ys[2]) {
      const int64_t i1 = o1 * g.stride[1] + off1;
      if (i0 < 0 || i0 >= g.xs[0] || i1 < 0 || i1 >= g.xs[1]) continue;
      T* dst = xc + (i0 * g.xs[1] + i1) * g.xs[2] + off2;
      for (int64_t o2 = lo2; o2 < hi2; ++o2) dst[o2 * s2] = static_cast<T>(dst[o2 * s2] + src[o2]);
    }
  }
}

// col[cxg*K, Y] for the channels starting at xg; rows in parallel when there is enough work.
template <typename T>
void Im2Col(const ConvGeom& g, const T* xg, int64_t cxg, T* col, bool parallel) {
  const int64_t K = g.KSpatial(), Y = g.YSpatial(), X = g.XSpatial();
  auto rows = [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) Im2ColRow(g, xg + (r / K) * X, r % K, col + r * Y);
  };
  if (parallel) ParallelFor(0, cxg * K, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, Y)), rows);
  else rows(0, cxg * K);
}

// dx_g[cxg, X] = col2im(col); channels in parallel (each owns its plane).
template <typename T>
void Col2Im(const ConvGeom& g, const T* col, int64_t cxg, T* dxg, bool parallel) {
  const int64_t K = g.KSpatial(), Y = g.YSpatial(), X = g.XSpatial();
  auto chans = [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      T* plane = dxg + c * X;
      std::fill(plane, plane + X, T(0));
      for (int64_t kk = 0; kk < K; ++kk) Col2ImRow(g, col + (c * K + kk) * Y, kk, plane);
    }
  };
  if (parallel) ParallelFor(0, cxg, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, K * Y)), chans);
  else chans(0, cxg);
}

// Small per-(image, group) problems run one per thread (gemm single-threaded inside); large ones
// run in sequence with the gemm and im2col threaded.
bool TaskParallel(const ConvGeom& g, int64_t tasks) {
  const int64_t work = (g.cy / g.groups) * g.YSpatial() * (g.cx / g.groups) * g.KSpatial();
  return GetNumThreads() > 1 && tasks >= GetNumThreads() && work < (int64_t(1) << 22);
}

template <typename T>
void Forward(const ConvGeom& g, const T* x, const T* w, T* y) {
  const int64_t cxg = g.cx / g.groups, cyg = g.cy / g.groups, K = g.KSpatial();
  const int64_t X = g.XSpatial(), Y = g.YSpatial(), rows = cxg * K;
  const bool direct = g.Is1x1();
  const int64_t tasks = g.n * g.groups;
  auto run = [&](int64_t b, int64_t e, bool inner_parallel) {
    std::vector<T> col(direct ? 0 : rows * Y);
    for (int64_t t = b; t < e; ++t) {
      const int64_t i = t / g.groups, gr = t % g.groups;
      const T* xg = x + (i * g.cx + gr * cxg) * X;
      if (!direct) Im2Col(g, xg, cxg, col.data(), inner_parallel);
      Gemm<T>(false, false, cyg, Y, rows, w + gr * cyg * rows, rows, direct ? xg : col.data(), Y, false,
              y + (i * g.cy + gr * cyg) * Y, Y);
    }
  };
  if (TaskParallel(g, tasks)) ParallelFor(0, tasks, 1, [&](int64_t b, int64_t e) { run(b, e, false); });
  else run(0, tasks, true);
}

template <typename T>
void BackwardData(const ConvGeom& g, const T* dy, const T* w, T* dx) {
  const int64_t cxg = g.cx / g.groups, cyg = g.cy / g.groups, K = g.KSpatial();
  const int64_t X = g.XSpatial(), Y = g.YSpatial(), rows = cxg * K;
  const bool direct = g.Is1x1();
  const int64_t tasks = g.n * g.groups;
  auto run = [&](int64_t b, int64_t e, bool inner_parallel) {
    std::vector<T> col(direct ? 0 : rows * Y);
    for (int64_t t = b; t < e; ++t) {
      const int64_t i = t / g.groups, gr = t % g.groups;
      T* dxg = dx + (i * g.cx + gr * cxg) * X;
      Gemm<T>(true, false, rows, Y, cyg, w + gr * cyg * rows, rows, dy + (i * g.cy + gr * cyg) * Y, Y, false,
              direct ? dxg : col.data(), Y);
      if (!direct) Col2Im(g, col.data(), cxg, dxg, inner_parallel);
    }
  };
  if (TaskParallel(g, tasks)) ParallelFor(0, tasks, 1, [&](int64_t b, int64_t e) { run(b, e, false); });
  else run(0, tasks, true);
}

template <typename T>
void BackwardWeight(const ConvGeom& g, const T* x, const T* dy, T* dw) {
  const int64_t cxg = g.cx / g.groups, cyg = g.cy / g.groups, K = g.KSpatial();
  const int64_t X = g.XSpatial(), Y = g.YSpatial(), rows = cxg * K;
  const bool direct = g.Is1x1();
  // Images accumulate into the same dw, so only groups run in parallel.
  auto run = [&](int64_t b, int64_t e, bool inner_parallel) {
    std::vector<T> col(direct ? 0 : rows * Y);
    for (int64_t gr = b; gr < e; ++gr) {
      T* dwg = dw + gr * cyg * rows;
      if (g.n == 0) std::fill(dwg, dwg + cyg * rows, T(0));
      for (int64_t i = 0; i < g.n; ++i) {
        const T* xg = x + (i * g.cx + gr * cxg) * X;
        if (!direct) Im2Col(g, xg, cxg, col.data(), inner_parallel);
        Gemm<T>(false, true, cyg, rows, Y, dy + (i * g.cy + gr * cyg) * Y, Y, direct ? xg : col.data(), Y, i > 0,
                dwg, rows);
      }
    }
  };
  if (TaskParallel(g, g.groups)) ParallelFor(0, g.groups, 1, [&](int64_t b, int64_t e) { run(b, e, false); });
  else run(0, g.groups, true);
}

template <typename F>
void DispatchConv(DType dt, F&& f) {
  switch (dt) {
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    case DType::kUInt8: return f(Tag<uint8_t>{});
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    default: break;
  }
  if (IsComplex(dt)) ThrowComplexNotImplemented(dt);  // (a user error: complex convolutions)
  OF_ASSERT(false) << "conv kernel called with " << DTypeName(dt);
}

}  // namespace

void GemmConvForward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& y) {
  DispatchConv(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Forward<T>(g, x.data<T>(), w.data<T>(), y.data<T>());
  });
}

void GemmConvBackwardData(const ConvGeom& g, const Tensor& dy, const Tensor& w, const Tensor& dx) {
  DispatchConv(dy.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BackwardData<T>(g, dy.data<T>(), w.data<T>(), dx.data<T>());
  });
}

void GemmConvBackwardWeight(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  DispatchConv(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BackwardWeight<T>(g, x.data<T>(), dy.data<T>(), dw.data<T>());
  });
}

void AddChannelBias(const Tensor& t, const Tensor& bias) {
  const int64_t n = t.sizes()[0], c = t.sizes()[1], inner = c == 0 ? 0 : t.numel() / std::max<int64_t>(1, n * c);
  DispatchConv(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    const T* b = bias.data<T>();
    ParallelFor(0, n * c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, inner)), [&](int64_t s, int64_t e) {
      for (int64_t r = s; r < e; ++r) {
        const T v = b[r % c];
        T* q = p + r * inner;
        for (int64_t j = 0; j < inner; ++j) q[j] = static_cast<T>(q[j] + v);
      }
    });
  });
}

}  // namespace oneflow
