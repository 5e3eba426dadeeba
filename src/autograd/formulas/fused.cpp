#include "autograd/formulas/fused.h"

#include "autograd/formulas.h"
#include "decl/dropout_backward.h"
#include "decl/fused_bias_add_gelu_grad.h"
#include "decl/sum.h"

namespace oneflow::functional {

namespace {

// grad summed over every dim of a but axis: the 1-D bias's gradient.
Tensor BiasGrad(const Tensor& grad, int64_t axis) {
  const int d = WrapDim(axis, grad.dim());
  DimVector dims;
  for (int i = 0; i < grad.dim(); ++i)
    if (i != d) dims.push_back(i);
  if (dims.empty()) return grad;
  return functional::Sum(grad, dims, false, std::nullopt);
}

}  // namespace

std::vector<Tensor> FusedBiasAddGeluGrads(const Tensor& grad, const Tensor& a, const Tensor& b, int64_t axis,
                                          const std::array<bool, 2>& grad_input_mask) {
  const Tensor da = functional::FusedBiasAddGeluGrad(a, b, grad, axis);
  return {grad_input_mask[0] ? da : Tensor(), grad_input_mask[1] ? BiasGrad(da, axis) : Tensor()};
}

std::vector<Tensor> FusedBiasAddDropoutGrads(const Tensor& grad, const Tensor& mask, const Tensor& a, int64_t axis,
                                             double p, const std::array<bool, 2>& grad_input_mask) {
  const Tensor da = mask.numel() == 0 ? grad : functional::DropoutBackward(grad, mask, DropoutScale(p, true));
  return {grad_input_mask[0] ? da : Tensor(), grad_input_mask[1] ? BiasGrad(da, axis) : Tensor()};
}

}  // namespace oneflow::functional
