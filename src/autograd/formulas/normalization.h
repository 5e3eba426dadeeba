// Backward helpers of the normalisation family (src/ops/table/normalization.yaml). Each returns the
// gradients of (input, weight, bias), undefined where grad_input_mask says unwanted. Without
// create_graph they call the fused *_backward kernel; with it, a composition of differentiable
// table ops that recomputes the statistics from the input (so that the statistics' dependence
// on the input is differentiated too: PyTorch's double-backward formulas, written as a graph).
#pragma once
#include <array>
#include <vector>

#include "autograd/functional.h"

namespace oneflow::functional {

std::vector<Tensor> BatchNormGrads(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                   const Tensor& save_mean, const Tensor& save_invstd, bool training, double eps,
                                   const std::array<bool, 3>& grad_input_mask);
std::vector<Tensor> LayerNormGrads(const Tensor& grad, const Tensor& input, const DimVector& normalized_shape,
                                   const Tensor& weight, const Tensor& mean, const Tensor& rstd, double eps,
                                   const std::array<bool, 3>& grad_input_mask);
std::vector<Tensor> GroupNormGrads(const Tensor& grad, const Tensor& input, int64_t num_groups,
                                   const Tensor& weight, const Tensor& mean, const Tensor& rstd, double eps,
                                   const std::array<bool, 3>& grad_input_mask);

}  // namespace oneflow::functional
