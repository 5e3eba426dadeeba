// Backward helpers of the fused family (src/ops/table/fused.yaml).
#pragma once
#include <array>
#include <string>
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

// Gradients of fused_matmul_bias's (x, weight, bias, _add_to_output).
std::vector<Tensor> FusedMatmulBiasGrads(const Tensor& grad, const Tensor& x, const Tensor& weight, double alpha,
                                         double beta, const std::array<bool, 4>& grad_input_mask);
// Gradients of rms_norm's (x, weight) over the last nd dims, with table ops (the row's inverse
// root mean square recomputed): dx = inv (g w - xhat mean(g w xhat)), dweight = sum(g xhat).
std::vector<Tensor> RmsNormGrads(const Tensor& grad, const Tensor& x, const Tensor& weight, int64_t nd,
                                 double epsilon, const std::array<bool, 2>& grad_input_mask);
// Gradients of skip_rms_norm's (x, weight, bias, skip): rms_norm's at h = x + bias + alpha skip.
std::vector<Tensor> SkipRmsNormGrads(const Tensor& grad, const Tensor& x, const Tensor& weight, const Tensor& bias,
                                     const Tensor& skip, double epsilon, double alpha,
                                     const std::array<bool, 4>& grad_input_mask);

// Gradients of native_fused_glu's (x, w, b, v, c), with table ops from the saved product: the
// gating's derivative (plus the product's own gradient, if any), then the GEMMs' transposes.
std::vector<Tensor> FusedGluGrads(const Tensor& grad, const Tensor& grad_product, const Tensor& x,
                                  const Tensor& w, const Tensor& b, const Tensor& v, const Tensor& c, const Tensor& product,
                                  const std::string& activation, const std::array<bool, 5>& grad_input_mask);

}  // namespace oneflow::functional
