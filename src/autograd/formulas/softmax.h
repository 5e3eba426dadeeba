// Backward helpers of the softmax family (src/ops/table/softmax.yaml).
#pragma once
#include <optional>

#include "autograd/functional.h"

namespace oneflow {
// The dim softmax works on: `dim` wrapped, or PyTorch's implicit choice when None.
int64_t SoftmaxDim(std::optional<int64_t> dim, int ndim);
}  // namespace oneflow

namespace oneflow::functional {

// Gradients of softmax_backward(g, y) = y * (g - sum(g * y)) with respect to y, and of
// log_softmax_backward(g, y) = g - exp(y) * sum(g) with respect to g (u: incoming gradient).
Tensor SoftmaxBackwardOutputGrad(const Tensor& u, const Tensor& g, const Tensor& y, int64_t dim);
Tensor LogSoftmaxBackwardGradOutputGrad(const Tensor& u, const Tensor& y, int64_t dim);

}  // namespace oneflow::functional
