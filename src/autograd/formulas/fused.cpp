#include "autograd/formulas/fused.h"

#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "decl/cat.h"
#include "decl/dropout_backward.h"
#include "decl/fused_glu_gate_backward.h"
#include "decl/gelu.h"
#include "decl/gelu_backward.h"
#include "decl/matmul.h"
#include "decl/mean.h"
#include "decl/mm.h"
#include "decl/narrow.h"
#include "decl/native_fused_bias_add_gelu_backward.h"
#include "decl/relu.h"
#include "decl/reshape.h"
#include "decl/rsqrt.h"
#include "decl/sigmoid.h"
#include "decl/silu.h"
#include "decl/silu_backward.h"
#include "decl/sum.h"
#include "decl/threshold_backward.h"
#include "decl/transpose.h"

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
  // one pass writes da and accumulates its bias reduction (src/ops/fused_bias_ops.cpp)
  const auto [da, db] = functional::NativeFusedBiasAddGeluBackward(a, b, grad, axis, grad_input_mask[1]);
  return {grad_input_mask[0] ? da : Tensor(), grad_input_mask[1] ? db : Tensor()};
}

std::vector<Tensor> FusedBiasAddDropoutGrads(const Tensor& grad, const Tensor& mask, const Tensor& a, int64_t axis,
                                             double p, const std::array<bool, 2>& grad_input_mask) {
  const Tensor da = mask.numel() == 0 ? grad : functional::DropoutBackward(grad, mask, DropoutScale(p, true));
  return {grad_input_mask[0] ? da : Tensor(), grad_input_mask[1] ? BiasGrad(da, axis) : Tensor()};
}

std::vector<Tensor> FusedMatmulBiasGrads(const Tensor& grad, const Tensor& x, const Tensor& weight, double alpha,
                                         double beta, const std::array<bool, 4>& grad_input_mask) {
  const int64_t n = weight.sizes()[0], k = weight.sizes()[1];
  int64_t m = 1;  // rows of the product (not -1 in the reshapes: ambiguous when n or k is 0)
  for (int i = 0; i + 1 < x.dim(); ++i) m *= x.sizes()[i];
  const Tensor g2 = functional::Reshape(grad, DimVector{m, n});
  std::vector<Tensor> out(4);
  // alpha scales the (n, k) operands only, never a product of x's rows, and no pass at all when
  // it is 1 (the common case: a `* 1.0` is a copy of the whole gradient)
  if (grad_input_mask[0]) out[0] = functional::Matmul(grad, alpha == 1.0 ? weight : weight * alpha);
  if (grad_input_mask[1]) {
    out[1] = functional::Mm(functional::Transpose(g2, 0, 1), functional::Reshape(x, DimVector{m, k}));
    if (alpha != 1.0) out[1] = out[1] * alpha;
  }
  if (grad_input_mask[2]) out[2] = functional::Sum(g2, DimVector{0}, false, std::nullopt);
  if (grad_input_mask[3]) out[3] = grad * beta;
  return out;
}

std::vector<Tensor> RmsNormGrads(const Tensor& grad, const Tensor& x, const Tensor& weight, int64_t nd,
                                 double epsilon, const std::array<bool, 2>& grad_input_mask) {
  DimVector dims, lead;
  for (int i = 0; i < x.dim(); ++i) (i >= x.dim() - nd ? dims : lead).push_back(i);
  const Tensor inv = functional::Rsqrt(functional::Mean(x * x, dims, true, std::nullopt) + epsilon);
  const Tensor xhat = x * inv;
  std::vector<Tensor> out(2);
  if (grad_input_mask[0]) {
    const Tensor gw = weight.defined() ? grad * weight : grad;
    out[0] = inv * (gw - xhat * functional::Mean(gw * xhat, dims, true, std::nullopt));
  }
  if (grad_input_mask[1] && weight.defined())
    out[1] = lead.empty() ? grad * xhat : functional::Sum(grad * xhat, lead, false, std::nullopt);
  return out;
}

std::vector<Tensor> SkipRmsNormGrads(const Tensor& grad, const Tensor& x, const Tensor& weight, const Tensor& bias,
                                     const Tensor& skip, double epsilon, double alpha,
                                     const std::array<bool, 4>& grad_input_mask) {
  Tensor h = x;
  if (bias.defined()) h = h + bias;
  if (skip.defined()) h = h + skip * alpha;
  const bool dh_needed = grad_input_mask[0] || grad_input_mask[2] || grad_input_mask[3];
  const std::vector<Tensor> g = RmsNormGrads(grad, h, weight, 1, epsilon, {dh_needed, grad_input_mask[1]});
  std::vector<Tensor> out(4);
  if (grad_input_mask[0]) out[0] = g[0];
  out[1] = g[1];
  if (grad_input_mask[2] && bias.defined()) out[2] = BiasGrad(g[0], -1);
  if (grad_input_mask[3] && skip.defined()) out[3] = g[0] * alpha;
  return out;
}

std::vector<Tensor> FusedGluGrads(const Tensor& grad, const Tensor& grad_product, const Tensor& x,
                                  const Tensor& w, const Tensor& b, const Tensor& v, const Tensor& c, const Tensor& product,
                                  const std::string& activation, const std::array<bool, 5>& grad_input_mask) {
  const bool split = v.defined();
  const int64_t nw = w.sizes()[0], k = w.sizes()[1], h = split ? nw : nw / 2;
  int64_t m = 1;
  for (int i = 0; i + 1 < x.dim(); ++i) m *= x.sizes()[i];
  const Tensor W = split ? functional::Cat({w, v}, 0) : w;  // (2h, k)
  const Tensor x2 = functional::Reshape(x, DimVector{m, k});
  // The saved product without create_graph; with it, recomputed from table ops so that the
  // gradient is differentiable in x, w, b, v, c too.
  Tensor p = product;
  if (GradMode::is_enabled()) {
    p = functional::Mm(x2, functional::Transpose(W, 0, 1));
    if (b.defined()) p = p + (split ? functional::Cat({b, c}, 0) : b);
  }
  const Tensor hid = functional::Narrow(p, 1, 0, h), gate = functional::Narrow(p, 1, h, h);
  Tensor dp = grad_product;  // (m, 2h)
  if (grad.defined() && !GradMode::is_enabled()) {
    // one pass over the product's rows (fused_glu_ops.cpp); the composition below is the
    // differentiable form create_graph needs
    dp = functional::FusedGluGateBackward(functional::Reshape(grad, DimVector{m, h}), p, grad_product, activation);
  } else if (grad.defined()) {
    const Tensor g2 = functional::Reshape(grad, DimVector{m, h});
    Tensor act, dgate;
    const Tensor gh = g2 * hid;
    if (activation == "none") {
      act = gate, dgate = gh;
    } else if (activation == "sigmoid") {
      act = functional::Sigmoid(gate), dgate = gh * act * (1.0 - act);
    } else if (activation == "relu") {
      act = functional::Relu(gate), dgate = functional::ThresholdBackward(gh, gate, 0.0);
    } else if (activation == "gelu" || activation == "fast_gelu") {
      const std::string approx = activation == "gelu" ? "none" : "tanh";
      act = functional::Gelu(gate, approx), dgate = functional::GeluBackward(gh, gate, approx);
    } else {
      act = functional::Silu(gate), dgate = functional::SiluBackward(gh, gate);
    }
    const Tensor dy = functional::Cat({g2 * act, dgate}, 1);
    dp = dp.defined() ? dp + dy : dy;
  }
  std::vector<Tensor> out(5);
  if (grad_input_mask[0]) out[0] = functional::Reshape(functional::Mm(dp, W), x.sizes());
  if (grad_input_mask[1] || grad_input_mask[3]) {
    const Tensor dW = functional::Mm(functional::Transpose(dp, 0, 1), x2);
    out[1] = split ? functional::Narrow(dW, 0, 0, h) : dW;
    if (split) out[3] = functional::Narrow(dW, 0, h, h);
  }
  if (b.defined() && (grad_input_mask[2] || grad_input_mask[4])) {
    const Tensor db = functional::Sum(dp, DimVector{0}, false, std::nullopt);
    out[2] = split ? functional::Narrow(db, 0, 0, h) : db;
    if (split) out[4] = functional::Narrow(db, 0, h, h);
  }
  return out;
}

}  // namespace oneflow::functional
