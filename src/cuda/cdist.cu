// cdist's direct form on CUDA (kernels/cdist.h; p = 2 on larger inputs takes the GEMM form
// there, on any device): one thread per (batch, row of x1, row of x2) accumulates over the
// features with the CPU loop's formula for each p.
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "kernels/cdist.h"

namespace oneflow::cuda {

namespace {

template <typename T>
__global__ void CdistKernel(const T* a, const T* b, T* out, int64_t batch, int64_t r1, int64_t r2, int64_t m,
                            double p) {
  OF_GRID_LOOP(e, batch * r1 * r2) {
    const int64_t j = e % r2, bi = e / r2, bt = bi / r1;
    const T* x = a + bi * m;
    const T* y = b + (bt * r2 + j) * m;
    const T pp = static_cast<T>(p);
    T acc = 0;
    if (p == 2.0) {
      for (int64_t k = 0; k < m; ++k) acc += (x[k] - y[k]) * (x[k] - y[k]);
      acc = sqrt(acc);
    } else if (p == 1.0) {
      for (int64_t k = 0; k < m; ++k) acc += fabs(x[k] - y[k]);
    } else if (p == 0.0) {
      for (int64_t k = 0; k < m; ++k) acc += x[k] != y[k] ? T(1) : T(0);
    } else if (isinf(p)) {
      for (int64_t k = 0; k < m; ++k) acc = fmax(acc, fabs(x[k] - y[k]));
    } else {
      for (int64_t k = 0; k < m; ++k) acc += pow(fabs(x[k] - y[k]), pp);
      acc = pow(acc, T(1) / pp);
    }
    out[e] = acc;
  }
}

void CdistRows(const Tensor& a, const Tensor& b, const Tensor& out, double p) {
  const int64_t batch = out.sizes()[0], r1 = a.sizes()[1], r2 = b.sizes()[1], m = a.sizes()[2];
  const int64_t n = batch * r1 * r2;
  if (n == 0) return;
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  cudaStream_t s = static_cast<cudaStream_t>(Stream(dev));
  if (out.dtype() == DType::kFloat32)
    CdistKernel<float><<<GridFor(n), kGridThreads, 0, s>>>(a.ptr<float>(), b.ptr<float>(), out.ptr<float>(), batch,
                                                           r1, r2, m, p);
  else
    CdistKernel<double><<<GridFor(n), kGridThreads, 0, s>>>(a.ptr<double>(), b.ptr<double>(), out.ptr<double>(),
                                                            batch, r1, r2, m, p);
  CheckLaunch("cdist");
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterCdistKernels() {
  kernels::RegisterKernel<kernels::CdistRowsKernel>(DeviceType::kCUDA, &CdistRows);
}

}  // namespace oneflow::cuda
