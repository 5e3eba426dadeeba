// The geometry of im2col / col2im (nn.functional.unfold / fold, ops/fold_ops.cpp): a [C, H, W]
// image's sliding kh x kw blocks as the columns of [C*kh*kw, L], L = oh * ow. Shared by the CPU
// loops and the CUDA kernels (cuda/fold.cu), hence OF_HD.
#pragma once
#include <cstdint>

#include "core/hd.h"

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

}  // namespace oneflow
