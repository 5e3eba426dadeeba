// Backward helpers of the activation family (src/ops/table/activation.yaml): the second
// derivatives used by the X_backward ops' own formulas, and prelu's gradients. Written with
// table ops, so they are differentiable again.
#pragma once
#include <string>

#include "autograd/functional.h"

namespace oneflow::functional {

// gg: the gradient arriving at X_backward's output; g: its grad_output input; x: the input.
Tensor EluDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x, double alpha,
                         double scale, double input_scale);
Tensor HardswishDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x);
Tensor TanhshrinkDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x);
Tensor SoftsignDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x);
Tensor SoftplusDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x, double beta,
                              double threshold);
Tensor MishDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x);
Tensor LogsigmoidDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x);
Tensor SiluDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x);
Tensor GeluDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x,
                          const std::string& approximate);

// prelu: the weight (scalar or one per channel) acts along dim 1 of the input.
Tensor PreluGradInput(const Tensor& grad, const Tensor& input, const Tensor& weight);
Tensor PreluGradWeight(const Tensor& grad, const Tensor& input, const Tensor& weight);

}  // namespace oneflow::functional
