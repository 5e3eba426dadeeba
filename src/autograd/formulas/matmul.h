// Backward helpers of the matmul family (src/ops/table/matmul.yaml).
#pragma once
#include "autograd/functional.h"

namespace oneflow::functional {

// d cdist(x1, x2, p) / d x1 (which = 0) or x2 (which = 1): per pair, the p-norm's gradient
// sign(d) |d|^(p-1) / dist^(p-1) of the difference d, 0 where the distance is 0.
Tensor CdistGrad(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, const Tensor& result, int which);

}  // namespace oneflow::functional
