#include "autograd/formulas.h"
#include "decl/abs.h"
#include "decl/exp.h"
#include "decl/gt.h"
#include "decl/le.h"
#include "decl/logical_and.h"
#include "decl/lt.h"
#include "decl/reshape.h"
#include "decl/sgn.h"
#include "decl/sigmoid.h"
#include "decl/softplus.h"
#include "decl/square.h"
#include "decl/tanh.h"
#include "decl/where.h"

namespace oneflow::functional {

namespace {
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluKappa = 0.044715;
}  // namespace

// elu'(x) = alpha * scale * input_scale * exp(x * input_scale) for x <= 0, scale above.
Tensor EluDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x, double alpha,
                         double scale, double input_scale) {
  Tensor d = gg * g * functional::Exp(x * input_scale) * (alpha * scale * input_scale * input_scale);
  return Masked(d, functional::Le(x, S(0)));
}

// hardswish'(x) = x / 3 + 1/2 on (-3, 3).
Tensor HardswishDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x) {
  Tensor inside = functional::LogicalAnd(functional::Gt(x, S(-3)), functional::Lt(x, S(3)));
  return Masked(gg * g / 3.0, inside);
}

// (x - tanh x)'' = 2 tanh(x) (1 - tanh(x)^2).
Tensor TanhshrinkDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x) {
  Tensor t = functional::Tanh(x);
  return gg * g * t * (1.0 - functional::Square(t)) * 2.0;
}

// (x / (1 + |x|))'' = -2 sign(x) / (1 + |x|)^3.
Tensor SoftsignDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x) {
  Tensor d = functional::Abs(x) + 1.0;
  return gg * g * functional::Sgn(x) * -2.0 / (d * d * d);
}

// softplus'' = beta s (1 - s) with s = sigmoid(beta x); 0 in the linear region.
Tensor SoftplusDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x, double beta,
                              double threshold) {
  Tensor s = functional::Sigmoid(x * beta);
  return Masked(gg * g * s * (1.0 - s) * beta, functional::Le(x * beta, S(threshold)));
}

// With t = tanh(softplus(x)) and s = sigmoid(x): mish' = t + x s (1 - t^2), and
// mish'' = (1 - t^2) s (2 + x (1 - s) - 2 x t s).
Tensor MishDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x) {
  Tensor s = functional::Sigmoid(x);
  Tensor t = functional::Tanh(functional::Softplus(x, 1.0, 20.0));
  Tensor inner = x * (1.0 - s) - x * t * s * 2.0 + 2.0;
  return gg * g * (1.0 - functional::Square(t)) * s * inner;
}

// logsigmoid' = 1 - sigmoid(x), logsigmoid'' = -s (1 - s).
Tensor LogsigmoidDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x) {
  Tensor s = functional::Sigmoid(x);
  return -(gg * g * s * (1.0 - s));
}

// silu'' = s (1 - s) (2 + x (1 - 2 s)).
Tensor SiluDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x) {
  Tensor s = functional::Sigmoid(x);
  return gg * g * s * (1.0 - s) * (x * (1.0 - s * 2.0) + 2.0);
}

Tensor GeluDoubleBackward(const Tensor& gg, const Tensor& g, const Tensor& x,
                          const std::string& approximate) {
  if (approximate == "tanh") {
    // f = x (1 + tanh u) / 2, u = k (x + kappa x^3):
    // f'' = (1 - t^2) (u' - x t u'^2 + x u'' / 2).
    Tensor x2 = functional::Square(x);
    Tensor t = functional::Tanh((x + x2 * x * kGeluKappa) * kSqrt2OverPi);
    Tensor du = (x2 * (3.0 * kGeluKappa) + 1.0) * kSqrt2OverPi;
    Tensor inner = du - x * t * du * du + x * x * (3.0 * kGeluKappa * kSqrt2OverPi);
    return gg * g * (1.0 - functional::Square(t)) * inner;
  }
  // f' = Phi + x phi, f'' = phi (2 - x^2).
  Tensor pdf = functional::Exp(functional::Square(x) * -0.5) * kInvSqrt2Pi;
  return gg * g * pdf * (2.0 - functional::Square(x));
}

namespace {
// The weight as a tensor broadcasting along dim 1 of the input ([C, 1, ..., 1]), or 0-d when it
// is a single value.
Tensor PreluWeightView(const Tensor& weight, const Tensor& input) {
  if (weight.numel() == 1) return functional::Reshape(weight, DimVector{});
  DimVector s(input.dim() - 1, 1);
  s[0] = weight.numel();
  return functional::Reshape(weight, s);
}
}  // namespace

Tensor PreluGradInput(const Tensor& grad, const Tensor& input, const Tensor& weight) {
  return functional::Where(functional::Gt(input, S(0)), grad, grad * PreluWeightView(weight, input));
}

Tensor PreluGradWeight(const Tensor& grad, const Tensor& input, const Tensor& weight) {
  Tensor wv = PreluWeightView(weight, input);
  Tensor g = Masked(grad * input, functional::Le(input, S(0)));
  return functional::Reshape(SumTo(g, wv.sizes()), weight.sizes());
}

}  // namespace oneflow::functional
