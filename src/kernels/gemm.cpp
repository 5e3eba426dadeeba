#include "kernels/gemm.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"

namespace oneflow {

namespace {

// Note [float32 GEMM on oneDNN]: float32 products go to oneDNN's sgemm (row-major, as called
// here), OpenBLAS's stay for float64 and complex. On this project's AVX-512 machines oneDNN's
// kernels measured 1.07x (1024^3) to 1.56x (128^3) faster than OpenBLAS's with 2 threads, which
// had left matmul at 0.86x PyTorch (MKL) for 256^3. oneDNN runs on the same OpenMP runtime, so
// flow.set_num_threads governs it, and inside a parallel region (BatchedGemm's products) it runs
// on the calling thread, as OpenBLAS does. Small products (below about 100^3 multiply-adds:
// oneDNN spends ~0.25 us a call before any work, OpenBLAS was up to 2x faster on 16x64x16) and
// k == 0 (BLAS scales c by beta) keep OpenBLAS.
constexpr int64_t kDnnlGemmMinWork = int64_t(1) << 20;

void Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (k > 0 && m * n * k >= kDnnlGemmMinWork && dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
                   dnnl_success)
    return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda,
              b, ldb, beta, c, ldc);
}

// A 2-D operand as BLAS wants it: row-major with unit column stride, or its transpose.
struct GemmOperand {
  const char* data;
  bool trans;
  int64_t ld;
};

// Uses `t`'s memory directly when one of its two strides is 1, else a contiguous copy.
GemmOperand AsGemm(const Tensor& t, int64_t rows, int64_t cols, Tensor* keep) {
  const int64_t s0 = t.strides()[0], s1 = t.strides()[1];
  const int64_t c1 = std::max<int64_t>(1, cols), r1 = std::max<int64_t>(1, rows);
  if (s1 == 1 && (s0 >= c1 || rows == 1)) return {t.raw_data(), false, std::max(s0, c1)};
  if (s0 == 1 && (s1 >= r1 || cols == 1)) return {t.raw_data(), true, std::max(s1, r1)};
  *keep = Contiguous(t);
  return {keep->raw_data(), false, c1};
}

template <typename T>
void RefGemm(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta) {
  using M = std::conditional_t<std::is_integral_v<T>, std::conditional_t<std::is_same_v<T, bool>, bool, int64_t>,
                               OpMath<T>>;
  const int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  const int64_t as0 = a.strides()[0], as1 = a.strides()[1], bs0 = b.strides()[0], bs1 = b.strides()[1];
  const int64_t cs0 = c.strides()[0];
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  T* cp = c.data<T>();
  const M al = alpha.To<M>(), be = beta.To<M>();
  const bool use_c = !(beta.is_float() ? beta.ToDouble() == 0.0 : beta.ToInt() == 0);
  ParallelFor(0, m * n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(k, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t ij = lo; ij < hi; ++ij) {
      const int64_t i = ij / n, j = ij % n;
      M acc = M(0);
      for (int64_t p = 0; p < k; ++p) {
        M x = static_cast<M>(static_cast<OpMath<T>>(ap[i * as0 + p * as1]));
        M y = static_cast<M>(static_cast<OpMath<T>>(bp[p * bs0 + j * bs1]));
        if constexpr (std::is_same_v<M, bool>) acc = acc || (x && y); else acc += x * y;
      }
      T& out = cp[i * cs0 + j];
      if constexpr (std::is_same_v<M, bool>) {
        out = (al && acc) || (use_c && be && static_cast<bool>(out));
      } else {
        M r = al * acc;
        if (use_c) r += be * static_cast<M>(static_cast<OpMath<T>>(out));
        out = static_cast<T>(static_cast<OpMath<T>>(r));
      }
    }
  });
}

}  // namespace

void Gemm(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta) {
  const int64_t m = a.sizes()[0], n = b.sizes()[1];
  if (m == 0 || n == 0 || c.device().type == DeviceType::kMeta) return;
  kernels::CallKernel<kernels::GemmKernel>(c.device(), a, b, c, alpha, beta);
}

namespace {

void GemmCpu(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta) {
  const int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  const DType dt = c.dtype();
  if (dt == DType::kFloat32 || dt == DType::kFloat64 || IsComplex(dt)) {
    Tensor ka, kb;
    // k == 0: BLAS scales c by beta (the empty sum is 0).
    GemmOperand ga = AsGemm(a, m, k, &ka), gb = AsGemm(b, k, n, &kb);
    auto ta = ga.trans ? CblasTrans : CblasNoTrans, tb = gb.trans ? CblasTrans : CblasNoTrans;
    const int64_t ldc = std::max<int64_t>(c.strides()[0], std::max<int64_t>(n, 1));
    if (IsComplex(dt)) {  // cgemm / zgemm take alpha and beta by pointer
      const std::complex<double> al = alpha.ToComplex(), be = beta.ToComplex();
      if (dt == DType::kComplex64) {
        const std::complex<float> a32(al), b32(be);
        cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &a32, ga.data, ga.ld, gb.data, gb.ld, &b32,
                    c.raw_data(), ldc);
      } else {
        cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &al, ga.data, ga.ld, gb.data, gb.ld, &be,
                    c.raw_data(), ldc);
      }
    } else if (dt == DType::kFloat32) {
      Sgemm(ga.trans, gb.trans, m, n, k, static_cast<float>(alpha.ToDouble()), reinterpret_cast<const float*>(ga.data),
            ga.ld, reinterpret_cast<const float*>(gb.data), gb.ld, static_cast<float>(beta.ToDouble()),
            c.data<float>(), ldc);
    } else {
      cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha.ToDouble(), reinterpret_cast<const double*>(ga.data), ga.ld,
                  reinterpret_cast<const double*>(gb.data), gb.ld, beta.ToDouble(), c.data<double>(), ldc);
    }
    return;
  }
  DispatchAll(dt, [&](auto tag) { RefGemm<typename std::decay_t<decltype(tag)>::type>(a, b, c, alpha, beta); });
}

}  // namespace

void Gemv(const Tensor& a, const Tensor& x, const Tensor& y, const Scalar& alpha, const Scalar& beta) {
  const int64_t m = a.sizes()[0], n = a.sizes()[1];
  if (m == 0 || y.device().type == DeviceType::kMeta) return;
  const DType dt = y.dtype();
  // As a one-column gemm: cgemm/zgemm, and cuBLAS (k == 0 included: BLAS scales by beta).
  if (IsComplex(dt) || y.device().type == DeviceType::kCUDA) {
    Tensor x2 = MakeView(x, DimVector{n, 1}, DimVector{x.strides()[0], 1}, x.offset());
    Tensor y2 = MakeView(y, DimVector{m, 1}, DimVector{y.strides()[0], 1}, y.offset());
    Gemm(a, x2, y2, alpha, beta);
    return;
  }
  if (n == 0) {  // BLAS returns early and leaves y alone; the empty product is 0
    const bool zero = beta.is_float() ? beta.ToDouble() == 0.0 : beta.ToInt() == 0;
    if (zero) {
      FillWith(y, Scalar(0));
    } else {
      DispatchAll(dt, [&](auto tag) {
        using T = typename std::decay_t<decltype(tag)>::type;
        const OpMath<T> b = beta.To<OpMath<T>>();
        T* p = y.data<T>();
        for (int64_t i = 0; i < m; ++i) {
          T& v = p[i * y.strides()[0]];
          if constexpr (std::is_same_v<T, bool>) v = v && b; else v = static_cast<T>(static_cast<OpMath<T>>(v) * b);
        }
      });
    }
    return;
  }
  if ((dt == DType::kFloat32 || dt == DType::kFloat64) && y.strides()[0] >= 1 && (n == 0 || x.strides()[0] >= 1)) {
    Tensor ka;
    GemmOperand ga = AsGemm(a, m, n, &ka);
    auto ta = ga.trans ? CblasTrans : CblasNoTrans;
    // Row-major a [m,n] given as (data, trans, ld): gemv's m/n are the stored matrix's dims.
    const int64_t rows = ga.trans ? n : m, cols = ga.trans ? m : n;
    const int64_t incx = std::max<int64_t>(x.strides()[0], 1), incy = y.strides()[0];
    if (dt == DType::kFloat32) {
      cblas_sgemv(CblasRowMajor, ta, rows, cols, static_cast<float>(alpha.ToDouble()),
                  reinterpret_cast<const float*>(ga.data), ga.ld, x.data<float>(), incx,
                  static_cast<float>(beta.ToDouble()), y.data<float>(), incy);
    } else {
      cblas_dgemv(CblasRowMajor, ta, rows, cols, alpha.ToDouble(), reinterpret_cast<const double*>(ga.data), ga.ld,
                  x.data<double>(), incx, beta.ToDouble(), y.data<double>(), incy);
    }
    return;
  }
  // The reference path as a gemm with one column.
  Tensor x2 = MakeView(x, DimVector{n, 1}, DimVector{x.strides()[0], 1}, x.offset());
  Tensor y2 = MakeView(y, DimVector{m, 1}, DimVector{y.strides()[0], 1}, y.offset());
  Gemm(a, x2, y2, alpha, beta);
}

Tensor Select0(const Tensor& t, int64_t i) {
  DimVector s(t.sizes().begin() + 1, t.sizes().end()), st(t.strides().begin() + 1, t.strides().end());
  return MakeView(t, s, st, t.offset() + i * t.strides()[0]);
}

void BatchedGemm(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha, const Scalar& beta) {
  if (out.device().type == DeviceType::kMeta) return;
  kernels::CallKernel<kernels::BatchedGemmKernel>(out.device(), a, b, out, alpha, beta);
}

namespace {

// Note [Small batched products]: a bmm of many small float32 products (DLRM's pairwise
// interaction: 512 products of 27x64 by 64x27) spent most of its time around the arithmetic: per
// product three tensor views, a registry dispatch and OpenBLAS's packing of both operands for a
// blocking meant for large matrices (perf, one thread: 14% of DLRM's inference step in OpenBLAS,
// its packing routines a third of it). Below kDnnlGemmMinWork multiply-adds with both output dims
// at most kSmallDim, each product is done here in one call: b is packed into a per-thread buffer
// with its columns contiguous and zero-padded to the vector width (a row copy when b is row-major;
// a is packed only when its k is not unit-stride), and a block of 3 output rows by up to 4 lane
// groups (32 columns) is 12 vector accumulators, each step over k one broadcast of a's element
// times b's row: no sums across lanes (a dot-product form of the same block spent as long in
// those as in the products, for k = 64).
constexpr int64_t kSmallDim = 128;
constexpr int kLanes = 8;  // SmallPanel's broadcast lists them
constexpr int kPanelRows = 3, kPanelVecs = 4;
using F8 = float __attribute__((vector_size(kLanes * sizeof(float))));
// Unaligned loads of a lane group (the packed rows are only float-aligned).
using F8u = float __attribute__((vector_size(kLanes * sizeof(float)), aligned(alignof(float))));

// c[0:MR, 0:cols] = alpha * a[0:MR, 0:k] @ bp[0:k, 0:NV*kLanes] + beta * c: a rows of stride lda
// (k unit-stride), bp rows of stride ldb, cols <= NV * kLanes the output columns written. The
// loops over the block are unrolled so that the accumulators stay in registers.
template <int MR, int NV>
void SmallPanel(const float* a, int64_t lda, const float* bp, int64_t ldb, int64_t k, float alpha, float beta,
                float* c, int64_t ldc, int64_t cols) {
  F8 acc[MR][NV] = {};
  for (int64_t p = 0; p < k; ++p) {
    F8 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = *reinterpret_cast<const F8u*>(bp + p * ldb + v * kLanes);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      const float x = a[i * lda + p];
      const F8 av = {x, x, x, x, x, x, x, x};  // in every lane (not 0 + x: that turns -0 into +0)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] += av * bv[v];
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i) {
    float row[NV * kLanes];
    __builtin_memcpy(row, acc[i], sizeof(row));
    float* out = c + i * ldc;
    if (beta == 0.f) {  // c's old values ignored (NaN included), as BLAS
      for (int64_t j = 0; j < cols; ++j) out[j] = alpha * row[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) out[j] = alpha * row[j] + beta * out[j];
    }
  }
}

template <int MR>
void SmallRows(int nv, const float* a, int64_t lda, const float* bp, int64_t ldb, int64_t k, float alpha,
               float beta, float* c, int64_t ldc, int64_t cols) {
  switch (nv) {
    case 4: return SmallPanel<MR, 4>(a, lda, bp, ldb, k, alpha, beta, c, ldc, cols);
    case 3: return SmallPanel<MR, 3>(a, lda, bp, ldb, k, alpha, beta, c, ldc, cols);
    case 2: return SmallPanel<MR, 2>(a, lda, bp, ldb, k, alpha, beta, c, ldc, cols);
    default: return SmallPanel<MR, 1>(a, lda, bp, ldb, k, alpha, beta, c, ldc, cols);
  }
}

// out[t] = alpha * a[t] @ b[t] + beta * out[t] for float32 a [batch, m, k], b [batch, k, n] (any
// strides) and contiguous out: Note [Small batched products].
void SmallBatchedSgemm(const Tensor& a, const Tensor& b, const Tensor& out, float alpha, float beta) {
  const int64_t batch = out.sizes()[0], m = out.sizes()[1], n = out.sizes()[2], k = a.sizes()[2];
  const int64_t np = (n + kLanes - 1) / kLanes * kLanes;
  const float* ad = a.data<float>();
  const float* bd = b.data<float>();
  float* od = out.data<float>();
  const int64_t as0 = a.strides()[0], as1 = a.strides()[1], as2 = a.strides()[2];
  const int64_t bs0 = b.strides()[0], bs1 = b.strides()[1], bs2 = b.strides()[2];
  const bool pack_a = as2 != 1 && k > 1;
  ParallelFor(0, batch, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, m * n * k / 64)),
              [&](int64_t lo, int64_t hi) {
    thread_local std::vector<float> buf;
    buf.resize(k * np + (pack_a ? m * k : 0));
    float* bp = buf.data();
    float* apk = bp + k * np;
    for (int64_t t = lo; t < hi; ++t) {
      const float* bt = bd + t * bs0;
      if (bs2 == 1) {  // b's rows zero-padded to np columns
        for (int64_t p = 0; p < k; ++p) {
          std::memcpy(bp + p * np, bt + p * bs1, n * sizeof(float));
          for (int64_t j = n; j < np; ++j) bp[p * np + j] = 0.f;
        }
      } else {  // b stored by columns (a^T views): read along them, write across
        for (int64_t j = 0; j < n; ++j)
          for (int64_t p = 0; p < k; ++p) bp[p * np + j] = bt[p * bs1 + j * bs2];
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = n; j < np; ++j) bp[p * np + j] = 0.f;
      }
      const float* at = ad + t * as0;
      int64_t lda = as1;
      if (pack_a) {
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = 0; p < k; ++p) apk[i * k + p] = at[i * as1 + p * as2];
        at = apk;
        lda = k;
      }
      float* ct = od + t * m * n;
      for (int64_t j0 = 0; j0 < n; j0 += kPanelVecs * kLanes) {
        const int64_t cols = std::min<int64_t>(kPanelVecs * kLanes, n - j0);
        const int nv = static_cast<int>((cols + kLanes - 1) / kLanes);
        for (int64_t i0 = 0; i0 < m; i0 += kPanelRows) {
          const float* ai = at + i0 * lda;
          float* ci = ct + i0 * n + j0;
          switch (std::min<int64_t>(kPanelRows, m - i0)) {
            case 3: SmallRows<3>(nv, ai, lda, bp + j0, np, k, alpha, beta, ci, n, cols); break;
            case 2: SmallRows<2>(nv, ai, lda, bp + j0, np, k, alpha, beta, ci, n, cols); break;
            default: SmallRows<1>(nv, ai, lda, bp + j0, np, k, alpha, beta, ci, n, cols); break;
          }
        }
      }
    }
  });
}

void BatchedGemmCpu(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha, const Scalar& beta) {
  const int64_t batch = out.sizes()[0];
  if (out.dtype() == DType::kFloat32 && batch > 1 && out.numel() > 0 && out.is_contiguous()) {
    const int64_t m = out.sizes()[1], n = out.sizes()[2], k = a.sizes()[2];
    if (k > 0 && m <= kSmallDim && n <= kSmallDim && m * n * k < kDnnlGemmMinWork) {
      SmallBatchedSgemm(a, b, out, static_cast<float>(alpha.ToDouble()), static_cast<float>(beta.ToDouble()));
      return;
    }
  }
  auto one = [&](int64_t i) { Gemm(Select0(a, i), Select0(b, i), Select0(out, i), alpha, beta); };
  // With at least one product per thread, whole products go to threads (OpenBLAS runs
  // single-threaded inside a parallel region): no synchronisation inside each product, which
  // measured 6-10x faster than threading every 256^3 product on a busy 2-core machine.
  if (batch >= GetNumThreads() && batch > 1) {
    ParallelFor(0, batch, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries above reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::GemmKernel>(DeviceType::kCPU, &GemmCpu);
  kernels::RegisterKernel<kernels::BatchedGemmKernel>(DeviceType::kCPU, &BatchedGemmCpu);
  return true;
}();

}  // namespace

template <typename T>
void BlasGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
              int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  // BLAS wants ld >= the stored row length even where nothing is read (k == 0 scales c by beta).
  lda = std::max<int64_t>(lda, std::max<int64_t>(1, ta ? m : k));
  ldb = std::max<int64_t>(ldb, std::max<int64_t>(1, tb ? k : n));
  auto cta = ta ? CblasTrans : CblasNoTrans, ctb = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    cblas_dgemm(CblasRowMajor, cta, ctb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template void BlasGemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                              int64_t, float, float*, int64_t);
template void BlasGemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                               const double*, int64_t, double, double*, int64_t);

}  // namespace oneflow
