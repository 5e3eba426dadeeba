// im2col / col2im on CUDA (kernels/fold.h): one thread per output element.
// col2im gathers: an image element sums the column elements that read it, in the (i, j) tap
// order the CPU adds them in, rounding to T after each add as the CPU does.
#include <cuda_runtime.h>

#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "kernels/fold.h"
#include "kernels/move.h"

namespace oneflow::cuda {

namespace {

template <typename U>
__global__ void Im2colKernel(const U* x, U* out, FoldGeometry g, int64_t in_n, int64_t out_n, int64_t total) {
  OF_GRID_LOOP(e, total) {
    const int64_t img = g.ImageOf(e % out_n);
    out[e] = img < 0 ? U(0) : x[e / out_n * in_n + img];
  }
}

template <typename T>
__global__ void Col2imKernel(const T* cols, T* out, FoldGeometry g, int64_t cols_n, int64_t img_n, int64_t total) {
  using M = OpMath<T>;
  const int64_t L = g.oh * g.ow;
  OF_GRID_LOOP(e, total) {
    const int64_t n = e / img_n, r = e % img_n, xw = r % g.W, yh = r / g.W % g.H, c = r / (g.W * g.H);
    const T* src = cols + n * cols_n;
    T acc = T(0);
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t ty = yh + g.ph - i * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t tx = xw + g.pw - j * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        const int64_t col = ((c * g.kh + i) * g.kw + j) * L + ty / g.sh * g.ow + tx / g.sw;
        acc = static_cast<T>(static_cast<M>(acc) + static_cast<M>(src[col]));
      }
    }
    out[e] = acc;
  }
}

void UnfoldColumns(const Tensor& x, const Tensor& out, int64_t n, int64_t c, const FoldGeometry& g) {
  const int64_t in_n = c * g.H * g.W, out_n = c * g.kh * g.kw * g.oh * g.ow, total = n * out_n;
  if (total == 0) return;
  DeviceGuard guard(out.device().index);
  DispatchWidth(out.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    Im2colKernel<U><<<GridFor(total), kGridThreads, 0, static_cast<cudaStream_t>(Stream(out.device().index))>>>(
        x.ptr<U>(), out.ptr<U>(), g, in_n, out_n, total);
  });
  CheckLaunch("the unfold kernel");
}

// Every element gathered: no zero fill needed.
void FoldColumns(const Tensor& cols, const Tensor& out, int64_t n, int64_t c, const FoldGeometry& g) {
  OF_CHECK_TYPE(out.dtype() != DType::kBool) << "not supported for bool tensors";  // as the CPU
  const int64_t cols_n = c * g.kh * g.kw * g.oh * g.ow, img_n = c * g.H * g.W, total = n * img_n;
  if (total == 0) return;
  DeviceGuard guard(out.device().index);
  DispatchNumber(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    Col2imKernel<T><<<GridFor(total), kGridThreads, 0, static_cast<cudaStream_t>(Stream(out.device().index))>>>(
        cols.ptr<T>(), out.ptr<T>(), g, cols_n, img_n, total);
  });
  CheckLaunch("the fold kernel");
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterFoldKernels() {
  kernels::RegisterKernel<kernels::UnfoldColumnsKernel>(DeviceType::kCUDA, &UnfoldColumns);
  kernels::RegisterKernel<kernels::FoldColumnsKernel>(DeviceType::kCUDA, &FoldColumns);
}

}  // namespace oneflow::cuda
