// CPU kernel of cdist's direct form (kernels/cdist.h): rows spread over threads, the inner loops
// over features vectorised.
#include "kernels/cdist.h"

#include <algorithm>
#include <cmath>

#include "core/parallel.h"

namespace oneflow {

namespace {

template <typename T>
void CdistKernel(const Tensor& a, const Tensor& b, const Tensor& out, double p) {
  const int64_t batch = out.sizes()[0], r1 = a.sizes()[1], r2 = b.sizes()[1], m = a.sizes()[2];
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  T* op = out.data<T>();
  const T pp = static_cast<T>(p);
  ParallelFor(0, batch * r1, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(r2 * m, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t bi = lo; bi < hi; ++bi) {
      const int64_t bt = bi / r1;
      const T* x = ap + bi * m;
      for (int64_t j = 0; j < r2; ++j) {
        const T* y = bp + (bt * r2 + j) * m;
        T acc = 0;
        if (p == 2.0) {
#pragma omp simd reduction(+ : acc)
          for (int64_t k = 0; k < m; ++k) acc += (x[k] - y[k]) * (x[k] - y[k]);
          acc = std::sqrt(acc);
        } else if (p == 1.0) {
#pragma omp simd reduction(+ : acc)
          for (int64_t k = 0; k < m; ++k) acc += std::abs(x[k] - y[k]);
        } else if (p == 0.0) {
#pragma omp simd reduction(+ : acc)
          for (int64_t k = 0; k < m; ++k) acc += x[k] != y[k] ? T(1) : T(0);
        } else if (std::isinf(p)) {
          for (int64_t k = 0; k < m; ++k) acc = std::max(acc, std::abs(x[k] - y[k]));
        } else {
          for (int64_t k = 0; k < m; ++k) acc += std::pow(std::abs(x[k] - y[k]), pp);
          acc = std::pow(acc, T(1) / pp);
        }
        op[bi * r2 + j] = acc;
      }
    }
  });
}

void CdistRowsCpu(const Tensor& a, const Tensor& b, const Tensor& out, double p) {
  if (out.dtype() == DType::kFloat32) CdistKernel<float>(a, b, out, p); else CdistKernel<double>(a, b, out, p);
}

// The CPU kernel in the registry (Note [Kernel registry]); the entry below reaches it.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::CdistRowsKernel>(DeviceType::kCPU, &CdistRowsCpu);
  return true;
}();

}  // namespace

void CdistRows(const Tensor& a, const Tensor& b, const Tensor& out, double p) {
  kernels::CallKernel<kernels::CdistRowsKernel>(out.device(), a, b, out, p);
}

}  // namespace oneflow
