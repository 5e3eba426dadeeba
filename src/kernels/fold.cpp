// CPU kernels of im2col / col2im (kernels/fold.h): (sample, channel) pairs spread over threads.
#include "kernels/fold.h"

#include <algorithm>

#include "core/parallel.h"
#include "ops/copy.h"

namespace oneflow {

namespace {

// Calls f(col_index, image_index or -1 for padding) for every element of one channel's columns.
template <typename F>
void ForEachTap(const FoldGeometry& g, int64_t c, const F& f) {
  const int64_t L = g.oh * g.ow;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t row = (c * g.kh + i) * g.kw + j;
      for (int64_t by = 0; by < g.oh; ++by) {
        const int64_t y = by * g.sh - g.ph + i * g.dh;
        for (int64_t bx = 0; bx < g.ow; ++bx) {
          const int64_t x = bx * g.sw - g.pw + j * g.dw;
          const bool inside = y >= 0 && y < g.H && x >= 0 && x < g.W;
          f(row * L + by * g.ow + bx, inside ? (c * g.H + y) * g.W + x : -1);
        }
      }
    }
}

void UnfoldColumnsCpu(const Tensor& x, const Tensor& out, int64_t N, int64_t C, const FoldGeometry& g) {
  DispatchAll(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const int64_t in_n = C * g.H * g.W, out_n = C * g.kh * g.kw * g.oh * g.ow;
    ParallelFor(0, N * C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, out_n / std::max<int64_t>(1, C))),
                [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc) {
        const int64_t n = nc / C, c = nc % C;
        ForEachTap(g, c, [&](int64_t col, int64_t img) {
          op[n * out_n + col] = img < 0 ? static_cast<T>(0) : xp[n * in_n + img];
        });
      }
    });
  });
}

void FoldColumnsCpu(const Tensor& cols, const Tensor& out, int64_t N, int64_t C, const FoldGeometry& g) {
  FillWith(out, Scalar(0));
  if (out.numel() == 0 || cols.numel() == 0) return;
  const Tensor& x = cols;
  DispatchNumber(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const int64_t in_n = C * g.kh * g.kw * g.oh * g.ow, out_n = C * g.H * g.W;
    ParallelFor(0, N * C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, in_n / std::max<int64_t>(1, C))),
                [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc) {
        const int64_t n = nc / C, c = nc % C;
        ForEachTap(g, c, [&](int64_t col, int64_t img) {
          if (img >= 0) op[n * out_n + img] = static_cast<T>(static_cast<M>(op[n * out_n + img]) + static_cast<M>(xp[n * in_n + col]));
        });
      }
    });
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::UnfoldColumnsKernel>(DeviceType::kCPU, &UnfoldColumnsCpu);
  kernels::RegisterKernel<kernels::FoldColumnsKernel>(DeviceType::kCPU, &FoldColumnsCpu);
  return true;
}();

}  // namespace

void UnfoldColumns(const Tensor& x, const Tensor& out, int64_t n, int64_t c, const FoldGeometry& g) {
  kernels::CallKernel<kernels::UnfoldColumnsKernel>(out.device(), x, out, n, c, g);
}

void FoldColumns(const Tensor& cols, const Tensor& out, int64_t n, int64_t c, const FoldGeometry& g) {
  kernels::CallKernel<kernels::FoldColumnsKernel>(out.device(), cols, out, n, c, g);
}

}  // namespace oneflow
