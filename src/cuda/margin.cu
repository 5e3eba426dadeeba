// multi_margin_loss and multilabel_margin_loss on CUDA (kernels/margin_loss.h has the contracts,
// kernels/margin_loss.cpp the CPU loops): one thread per row, in double as the CPU computes, in the CPU's order.
#include <cuda_runtime.h>

#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "kernels/margin_loss.h"

namespace oneflow::cuda {

namespace {

__device__ inline double MarginTerm(double z, int p) { return p == 1 ? z : z * z; }

__global__ void MultiMarginRowsKernel(const double* x, const int64_t* t, const double* w, int64_t rows, int64_t c,
                                      int p, double margin, double* loss) {
  OF_GRID_LOOP(i, rows) {
    const double* xi = x + i * c;
    const int64_t y = t[i];
    const double wy = w ? w[y] : 1.0;
    double sum = 0;
    for (int64_t k = 0; k < c; ++k) {
      if (k == y) continue;
      const double z = margin - xi[y] + xi[k];
      if (z > 0) sum += MarginTerm(z, p) * wy;
    }
    loss[i] = sum / static_cast<double>(c);
  }
}

__global__ void MultiMarginGradKernel(const double* x, const int64_t* t, const double* w, const double* s,
                                      int64_t rows, int64_t c, int p, double margin, double* gx) {
  OF_GRID_LOOP(i, rows) {
    const double* xi = x + i * c;
    double* g = gx + i * c;
    const int64_t y = t[i];
    const double wy = w ? w[y] : 1.0;
    for (int64_t k = 0; k < c; ++k) g[k] = 0;
    for (int64_t k = 0; k < c; ++k) {
      if (k == y) continue;
      const double z = margin - xi[y] + xi[k];
      if (z <= 0) continue;
      const double d = (p == 1 ? 1.0 : 2 * z) * wy * s[i] / static_cast<double>(c);
      g[k] += d;
      g[y] -= d;
    }
  }
}

// multilabel: row i's targets are t's leading non-negative entries; `mark` (rows x C scratch)
// flags them. f(j, k, z) for every (target j, non-target k) pair with z = 1 - x_j + x_k.
template <typename F>
__device__ void ForEachLabelPair(const double* xi, const int64_t* ti, unsigned char* mark, int64_t c, const F& f) {
  int64_t n = 0;
  for (int64_t k = 0; k < c; ++k) mark[k] = 0;
  while (n < c && ti[n] >= 0) mark[ti[n++]] = 1;
  for (int64_t q = 0; q < n; ++q)
    for (int64_t k = 0; k < c; ++k)
      if (!mark[k]) f(ti[q], k, 1.0 - xi[ti[q]] + xi[k]);
}

__global__ void MultilabelRowsKernel(const double* x, const int64_t* t, unsigned char* mark, int64_t rows, int64_t c,
                                     double* loss) {
  OF_GRID_LOOP(i, rows) {
    double sum = 0;
    ForEachLabelPair(x + i * c, t + i * c, mark + i * c, c, [&](int64_t, int64_t, double z) { sum += z > 0 ? z : 0.0; });
    loss[i] = sum / static_cast<double>(c);
  }
}

__global__ void MultilabelGradKernel(const double* x, const int64_t* t, unsigned char* mark, const double* s,
                                     int64_t rows, int64_t c, double* gx) {
  OF_GRID_LOOP(i, rows) {
    double* g = gx + i * c;
    for (int64_t k = 0; k < c; ++k) g[k] = 0;
    const double d = s[i] / static_cast<double>(c);
    ForEachLabelPair(x + i * c, t + i * c, mark + i * c, c, [&](int64_t j, int64_t k, double z) {
      if (z > 0) {
        g[k] += d;
        g[j] -= d;
      }
    });
  }
}

void MultilabelMarginRows(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& loss) {
  const int64_t rows = loss.numel(), c = rows ? x.numel() / rows : 0;
  if (rows == 0) return;
  DeviceGuard guard(loss.device().index);
  MultilabelRowsKernel<<<GridFor(rows), kGridThreads, 0, static_cast<cudaStream_t>(Stream(loss.device().index))>>>(
      x.ptr<double>(), t.ptr<int64_t>(), mark.ptr<unsigned char>(), rows, c, loss.ptr<double>());
  CheckLaunch("multilabel_margin_loss");
}

void MultilabelMarginGrad(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& s, const Tensor& gx) {
  const int64_t rows = s.numel(), c = rows ? gx.numel() / rows : 0;
  if (rows == 0) return;
  DeviceGuard guard(gx.device().index);
  MultilabelGradKernel<<<GridFor(rows), kGridThreads, 0, static_cast<cudaStream_t>(Stream(gx.device().index))>>>(
      x.ptr<double>(), t.ptr<int64_t>(), mark.ptr<unsigned char>(), s.ptr<double>(), rows, c, gx.ptr<double>());
  CheckLaunch("multilabel_margin_loss backward");
}

void MultiMarginRows(const Tensor& x, const Tensor& t, const Tensor& w, int64_t p, double margin, const Tensor& loss) {
  const int64_t rows = loss.numel(), c = rows ? x.numel() / rows : 0;
  if (rows == 0) return;
  DeviceGuard guard(loss.device().index);
  MultiMarginRowsKernel<<<GridFor(rows), kGridThreads, 0, static_cast<cudaStream_t>(Stream(loss.device().index))>>>(
      x.ptr<double>(), t.ptr<int64_t>(), w.defined() ? w.ptr<double>() : nullptr, rows, c, static_cast<int>(p),
      margin, loss.ptr<double>());
  CheckLaunch("multi_margin_loss");
}

void MultiMarginGrad(const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& s, int64_t p, double margin,
                     const Tensor& gx) {
  const int64_t rows = s.numel(), c = rows ? gx.numel() / rows : 0;
  if (rows == 0) return;
  DeviceGuard guard(gx.device().index);
  MultiMarginGradKernel<<<GridFor(rows), kGridThreads, 0, static_cast<cudaStream_t>(Stream(gx.device().index))>>>(
      x.ptr<double>(), t.ptr<int64_t>(), w.defined() ? w.ptr<double>() : nullptr, s.ptr<double>(), rows, c,
      static_cast<int>(p), margin, gx.ptr<double>());
  CheckLaunch("multi_margin_loss backward");
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterMarginLossKernels() {
  kernels::RegisterKernel<kernels::MultilabelMarginRowsKernel>(DeviceType::kCUDA, &MultilabelMarginRows);
  kernels::RegisterKernel<kernels::MultilabelMarginGradKernel>(DeviceType::kCUDA, &MultilabelMarginGrad);
  kernels::RegisterKernel<kernels::MultiMarginRowsKernel>(DeviceType::kCUDA, &MultiMarginRows);
  kernels::RegisterKernel<kernels::MultiMarginGradKernel>(DeviceType::kCUDA, &MultiMarginGrad);
}

}  // namespace oneflow::cuda
