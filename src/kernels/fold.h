// The geometry of im2col / col2im (nn.functional.unfold / fold, ops/fold_ops.cpp): a [C, H, W]
// image's sliding kh x kw blocks as the columns of [C*kh*kw, L], L = oh * ow. Shared by the CPU
// loops (kernels/fold.cpp) and the CUDA kernels (cuda/fold.cu), hence OF_HD; and their kernels.
#pragma once
#include <cstdint>

#include "core/hd.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

struct FoldGeometry {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
  int64_t H, W, oh, ow;  // image size and the number of blocks along each dim

  // The image element (c, y, x) read by column element `col` of the [C*kh*kw, L] columns, as
  // (c * H + y) * W + x, or -1 where the block reads padding.
  OF_HD int64_t ImageOf(int64_t col) const {
    const int64_t L = oh * ow, bx = col % ow, by = col / ow % oh, row = col / L;
    const int64_t j = row % kw, i = row / kw % kh, c = row / (kw * kh);
    const int64_t y = by * sh - ph + i * dh, x = bx * sw - pw + j * dw;
    return (y >= 0 && y < H && x >= 0 && x < W) ? (c * H + y) * W + x : -1;
  }
};

// im2col: x contiguous [n, c, H, W] -> out contiguous [n, c*kh*kw, L] (padding reads 0), any dtype.
void UnfoldColumns(const Tensor& x, const Tensor& out, int64_t n, int64_t c, const FoldGeometry& g);
// col2im: cols contiguous [n, c*kh*kw, L] added into out [n, c, H, W] (written completely; the
// number dtypes, bool raises TypeError).
void FoldColumns(const Tensor& cols, const Tensor& out, int64_t n, int64_t c, const FoldGeometry& g);

// Their kernel interfaces (Note [Kernel registry]): CPU in kernels/fold.cpp, CUDA in cuda/fold.cu.
namespace kernels {
struct UnfoldColumnsKernel {
  static constexpr const char* kName = "unfold_columns";
  using Fn = void (*)(const Tensor& x, const Tensor& out, int64_t n, int64_t c, const FoldGeometry& g);
  using Writes = KernelWrites<1>;
};
struct FoldColumnsKernel {
  static constexpr const char* kName = "fold_columns";
  using Fn = void (*)(const Tensor& cols, const Tensor& out, int64_t n, int64_t c, const FoldGeometry& g);
  using Writes = KernelWrites<1>;
};
}  // namespace kernels

}  // namespace oneflow
