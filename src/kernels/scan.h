// The scans' kernels (ops/scan_ops.cpp has the dtype rules and checks): a contiguous tensor viewed
// as [outer, n, inner], n the scanned dim. CPU in kernels/scan.cpp, CUDA in cuda/scan.cu
// (Note [Kernel registry]).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// cumsum (kind 0), cumprod (1), logcumsumexp (2) of x into out (same dtype); `reverse` scans
// from the end.
void ScanLines(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int kind, bool reverse);
// cummax (max) / cummin: the running extreme into values (x's dtype) and its position along n into
// indices (int64); NaN and ties take over (PyTorch's rule).
void CumExtremeLines(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t outer, int64_t n,
                     int64_t inner, bool max);
// out = zeros.scatter_add(n's dim, idx, g): each position gets the gradients of the outputs whose
// running extreme it was; idx (int64) in [0, n), g floating; 16-bit sums formed in float.
void CumExtremeBackwardLines(const Tensor& g, const Tensor& idx, const Tensor& out, int64_t outer, int64_t n,
                             int64_t inner);

namespace kernels {
struct ScanKernel {
  static constexpr const char* kName = "scan";
  using Fn = void (*)(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int kind,
                      bool reverse);
  using Writes = KernelWrites<1>;
};
struct CumExtremeKernel {
  static constexpr const char* kName = "cum_extreme";
  using Fn = void (*)(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t outer, int64_t n,
                      int64_t inner, bool max);
  using Writes = KernelWrites<1, 2>;
};
struct CumExtremeBackwardKernel {
  static constexpr const char* kName = "cum_extreme_backward";
  using Fn = void (*)(const Tensor& g, const Tensor& idx, const Tensor& out, int64_t outer, int64_t n,
                      int64_t inner);
  using Writes = KernelWrites<2>;
};
}  // namespace kernels

}  // namespace oneflow
