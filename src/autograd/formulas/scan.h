// Backward helpers of the scans (src/ops/table/scan.yaml).
#pragma once
#include "autograd/functional.h"

namespace oneflow::functional {

// cumprod's gradient, zeros included (as PyTorch's cumprod_backward): without zeros
// reverse_cumsum(grad * result) / x; with zeros, positions before a slice's first zero use that
// formula, the first zero gets sum_{j>=k} grad_j prod_{m<=j, m!=k} x_m, later positions 0. Under
// create_graph the O(n^2) product form is used, which stays differentiable at the zeros too.
Tensor CumprodGrad(const Tensor& grad, const Tensor& x, const Tensor& result, int64_t dim);
// logcumsumexp (reverse = false) and reverse_logcumsumexp: grad_x[i] = sum over the outputs j
// that include x_i of grad_j exp(x_i - result_j), summed in log space (positive and negative
// parts of grad separately) so that nothing overflows.
Tensor LogcumsumexpGrad(const Tensor& grad, const Tensor& x, const Tensor& result, int64_t dim, bool reverse);

}  // namespace oneflow::functional
