// Backward helpers of the fused family (src/ops/table/fused.yaml).
#pragma once
#include <array>
#include <vector>

#include "autograd/functional.h"

namespace oneflow::functional {

// Gradients of fused_bias_add_gelu's (a, b): the fused fused_bias_add_gelu_grad kernel, and its
// sum over every dim but axis for b.
std::vector<Tensor> FusedBiasAddGeluGrads(const Tensor& grad, const Tensor& a, const Tensor& b, int64_t axis,
                                          const std::array<bool, 2>& grad_input_mask);
// Gradients of native_fused_bias_add_dropout's (a, b): grad * keep / (1 - p) (grad itself when
// the mask is empty: p == 0), and its sum over every dim but axis for b.
std::vector<Tensor> FusedBiasAddDropoutGrads(const Tensor& grad, const Tensor& mask, const Tensor& a, int64_t axis,
                                             double p, const std::array<bool, 2>& grad_input_mask);

}  // namespace oneflow::functional
