#include <cmath>

#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "ops/loss_common.h"
#include "decl/abs.h"
#include "decl/acos.h"
#include "decl/amax.h"
#include "decl/clamp.h"
#include "decl/clamp_min.h"
#include "decl/cross_entropy_backward.h"
#include "decl/eq.h"
#include "decl/exp.h"
#include "decl/expand.h"
#include "decl/ge.h"
#include "decl/gt.h"
#include "decl/isfinite.h"
#include "decl/log.h"
#include "decl/logical_not.h"
#include "decl/nll_loss.h"
#include "decl/ones_like.h"
#include "decl/pow.h"
#include "decl/reshape.h"
#include "decl/sgn.h"
#include "decl/sigmoid.h"
#include "decl/sin.h"
#include "decl/softplus.h"
#include "decl/sqrt.h"
#include "decl/square.h"
#include "decl/sum.h"
#include "decl/unsqueeze.h"
#include "decl/where.h"

namespace oneflow::functional {

namespace {

DimVector Broadcast(const Tensor& a, const Tensor& b) { return BroadcastShapes(a.sizes(), b.sizes()); }

int ClassDim(const Tensor& x) { return x.dim() == 1 ? 0 : 1; }

// log_softmax along dim d from table ops; the row max is a constant shift (no gradient needed:
// the result does not depend on it).
Tensor LogSoftmaxOf(const Tensor& x, int d) {
  Tensor m;
  {
    AutoGradMode no_grad(false);
    m = functional::Amax(x, DimVector{d}, true);
    m = functional::Where(functional::Isfinite(m), m, S(0));
  }
  Tensor z = x - m;
  return z - functional::Log(functional::Sum(functional::Exp(z), DimVector{d}, true, std::nullopt));
}

// The class weights as a tensor broadcasting along the class dim (1 when absent).
Tensor WeightView(const Tensor& weight, const Tensor& x) {
  if (!weight.defined()) return S(1.0);
  if (x.dim() == 1) return weight;
  DimVector s(x.dim() - 1, 1);
  s[0] = weight.numel();
  return functional::Reshape(weight, s);
}

// The per-position gradient scale of cross_entropy / nll with probability targets, with the
// class dim kept (1): the incoming gradient, divided by the number of positions for 'mean'.
Tensor ProbScale(const Tensor& g, const Tensor& x, const std::string& reduction) {
  const int d = ClassDim(x);
  if (reduction == "none") return functional::Unsqueeze(g, d);
  if (reduction == "mean") return g / static_cast<double>(x.numel() / std::max<int64_t>(1, x.sizes()[d]));
  return g;
}

bool IsProb(const Tensor& x, const Tensor& target) {
  return IsFloating(target.dtype()) && target.sizes() == x.sizes();
}

}  // namespace

Tensor LossReductionGrad(const Tensor& grad, const DimVector& sizes, const std::string& reduction) {
  if (reduction == "none") return grad;
  Tensor g = reduction == "mean" ? grad / static_cast<double>(NumelOf(sizes)) : grad;
  return functional::Expand(g, sizes);
}

Tensor MseLossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction) {
  return LossReductionGrad(grad, Broadcast(x, y), reduction) * (x - y) * 2.0;
}

Tensor L1LossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction) {
  return LossReductionGrad(grad, Broadcast(x, y), reduction) * functional::Sgn(x - y);
}

// (x - y) / beta inside (-beta, beta), +-1 outside; beta = 0 is l1's sign.
Tensor SmoothL1LossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction,
                        double beta) {
  Tensor g = LossReductionGrad(grad, Broadcast(x, y), reduction);
  if (beta == 0) return g * functional::Sgn(x - y);
  return g * functional::Clamp((x - y) / beta, WrappedNumber(Scalar(-1.0)), WrappedNumber(Scalar(1.0)));
}

Tensor HuberLossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction,
                     double delta) {
  return LossReductionGrad(grad, Broadcast(x, y), reduction) *
         functional::Clamp(x - y, WrappedNumber(Scalar(-delta)), WrappedNumber(Scalar(delta)));
}

// d/dx log(1 + e^{-xy}) = -y sigmoid(-xy).
Tensor SoftMarginLossGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const std::string& reduction) {
  return -(LossReductionGrad(grad, Broadcast(x, y), reduction) * y * functional::Sigmoid(-(x * y)));
}

// w (x - y) / max(x (1 - x), 1e-12), PyTorch's guard against x = 0 or 1.
Tensor BinaryCrossEntropyGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& weight,
                              const std::string& reduction) {
  Tensor r = LossReductionGrad(grad, x.sizes(), reduction) * (x - y) /
             functional::ClampMin((1.0 - x) * x, WrappedNumber(Scalar(1e-12)));
  return weight.defined() ? r * weight : r;
}

Tensor BinaryCrossEntropyTargetGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& weight,
                                    const std::string& reduction) {
  Tensor r = LossReductionGrad(grad, x.sizes(), reduction) * (functional::Log(1.0 - x) - functional::Log(x));
  return weight.defined() ? r * weight : r;
}

// ((pw y + 1 - y) sigmoid(x) - pw y) w; pw = 1 gives sigmoid(x) - y.
Tensor BceWithLogitsGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& weight,
                         const Tensor& pos_weight, const std::string& reduction) {
  Tensor r;
  if (pos_weight.defined()) {
    Tensor t = pos_weight * y;
    r = (t - y + 1.0) * functional::Sigmoid(x) - t;
  } else {
    r = functional::Sigmoid(x) - y;
  }
  r = LossReductionGrad(grad, x.sizes(), reduction) * r;
  return weight.defined() ? r * weight : r;
}

// d/dy: -x + (pw - 1) log(1 + e^{-x}).
Tensor BceWithLogitsTargetGrad(const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& weight,
                               const Tensor& pos_weight, const std::string& reduction) {
  Tensor r = -x;
  if (pos_weight.defined()) r = r + (pos_weight - 1.0) * functional::Softplus(-x, 1.0, 20.0);
  r = LossReductionGrad(grad, x.sizes(), reduction) * r;
  return weight.defined() ? r * weight : r;
}

namespace {
Tensor KlReductionGrad(const Tensor& grad, const Tensor& x, const Tensor& t, const std::string& reduction) {
  if (reduction != "batchmean") return LossReductionGrad(grad, Broadcast(x, t), reduction);
  const double n = x.dim() > 0 ? static_cast<double>(x.sizes()[0]) : 1.0;
  return functional::Expand(grad / n, Broadcast(x, t));
}
}  // namespace

Tensor KlDivGrad(const Tensor& grad, const Tensor& x, const Tensor& t, const std::string& reduction,
                 bool log_target) {
  Tensor g = KlReductionGrad(grad, x, t, reduction);
  if (log_target) return -(g * functional::Exp(t));
  return -Masked(g * t, functional::Gt(t, S(0)));
}

Tensor KlDivTargetGrad(const Tensor& grad, const Tensor& x, const Tensor& t, const std::string& reduction,
                       bool log_target) {
  Tensor g = KlReductionGrad(grad, x, t, reduction);
  if (log_target) return g * functional::Exp(t) * (t - x + 1.0);
  return Masked(g * (functional::Log(t) - x + 1.0), functional::Gt(t, S(0)));
}

// The hinge passes the gradient where -y (x1 - x2) + margin >= 0 (clamp_min's rule).
Tensor MarginRankingGrad(const Tensor& grad, const Tensor& x1, const Tensor& x2, const Tensor& y, double margin,
                         const std::string& reduction, int which) {
  const DimVector shape = BroadcastShapes(Broadcast(x1, x2), y.sizes());
  Tensor active = functional::Ge(-(y * (x1 - x2)) + margin, S(0));
  Tensor g = LossReductionGrad(grad, shape, reduction);
  Tensor d = which == 0 ? -(g * y) : which == 1 ? g * y : -(g * (x1 - x2));
  return Masked(d, active);
}

Tensor NllLossDoubleBackward(const Tensor& gg, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                             const std::string& reduction) {
  return functional::NllLoss(gg, target, weight, ignore_index, reduction);
}

Tensor CrossEntropyTargetGrad(const Tensor& grad, const Tensor& x, const Tensor& target, const Tensor& weight,
                              const std::string& reduction, double label_smoothing) {
  const int d = ClassDim(x);
  return -(ProbScale(grad, x, reduction) * WeightView(weight, x) * LogSoftmaxOf(x, d) * (1.0 - label_smoothing));
}

namespace {
// The smoothed probability targets q' = (1 - e) q + e / C.
Tensor SmoothedTargets(const Tensor& x, const Tensor& q, double e) {
  return e == 0 ? q : q * (1.0 - e) + e / static_cast<double>(x.sizes()[ClassDim(x)]);
}
// t summed over every dim but the class dim: a [C] weight gradient.
Tensor SumToClasses(const Tensor& t, const Tensor& x) {
  const int d = ClassDim(x);
  DimVector dims;
  for (int i = 0; i < t.dim(); ++i)
    if (i != d) dims.push_back(i);
  return dims.empty() ? t : functional::Sum(t, dims, false, std::nullopt);
}
}  // namespace

// Probability targets: loss = -sum_c w_c q'_c log p_c at each position, linear in w.
Tensor CrossEntropyWeightGrad(const Tensor& grad, const Tensor& x, const Tensor& target,
                              const std::string& reduction, double label_smoothing) {
  const Tensor q = SmoothedTargets(x, target, label_smoothing);
  return SumToClasses(-(ProbScale(grad, x, reduction) * q * LogSoftmaxOf(x, ClassDim(x))), x);
}

// cross_entropy_backward, probability targets: gx_c = s (A p_c - w_c q'_c), A = sum_k w_k q'_k.
// d<gg, gx>/dw_c = sum over positions of s q'_c (sum_k gg_k p_k - gg_c).
Tensor CrossEntropyDoubleBackwardWeight(const Tensor& gg, const Tensor& g, const Tensor& x,
                                        const Tensor& target, const std::string& reduction,
                                        double label_smoothing) {
  const int d = ClassDim(x);
  const Tensor q = SmoothedTargets(x, target, label_smoothing);
  const Tensor p = functional::Exp(LogSoftmaxOf(x, d));
  const Tensor a = functional::Sum(gg * p, DimVector{d}, true, std::nullopt);
  return SumToClasses(ProbScale(g, x, reduction) * q * (a - gg), x);
}

// cross_entropy_backward is linear in grad_output: U = its value for a unit gradient, and the
// transpose sums gg * U over the classes (over everything for a reduced loss).
Tensor CrossEntropyDoubleBackwardGrad(const Tensor& gg, const Tensor& g, const Tensor& x, const Tensor& target,
                                      const Tensor& weight, int64_t ignore_index, const std::string& reduction,
                                      double label_smoothing) {
  Tensor ones = functional::OnesLike(g, std::nullopt, std::nullopt, false);
  Tensor u = functional::CrossEntropyBackward(ones, x, target, weight, ignore_index, reduction, label_smoothing);
  Tensor prod = gg * u;
  if (reduction == "none") return functional::Sum(prod, DimVector{ClassDim(x)}, false, std::nullopt);
  return functional::Sum(prod, std::nullopt, false, std::nullopt);
}

// The gradient is s A p - s B with p = softmax(x): its derivative in x is s A times the softmax
// Jacobian, (s A) (p * gg - p * sum(p * gg)).
Tensor CrossEntropyDoubleBackwardInput(const Tensor& gg, const Tensor& g, const Tensor& x, const Tensor& target,
                                       const Tensor& weight, int64_t ignore_index, const std::string& reduction,
                                       double label_smoothing) {
  const int d = ClassDim(x);
  Tensor sa;
  if (IsProb(x, target)) {
    const double classes = static_cast<double>(x.sizes()[d]);
    Tensor q = target * (1.0 - label_smoothing) + label_smoothing / classes;
    Tensor a = functional::Sum(q * WeightView(weight, x), DimVector{d}, true, std::nullopt);
    sa = ProbScale(g, x, reduction) * a;
  } else {
    Tensor f = CrossEntropyClassFactor(target, weight, x.sizes(), ignore_index, reduction, label_smoothing,
                                       x.dtype());
    sa = functional::Unsqueeze(g * f, d);
  }
  Tensor p = functional::Exp(LogSoftmaxOf(x, d));
  Tensor pg = p * gg;
  return sa * (pg - p * functional::Sum(pg, DimVector{d}, true, std::nullopt));
}

Tensor CrossEntropyDoubleBackwardTarget(const Tensor& gg, const Tensor& g, const Tensor& x, const Tensor& target,
                                        const Tensor& weight, const std::string& reduction,
                                        double label_smoothing) {
  const int d = ClassDim(x);
  Tensor p = functional::Exp(LogSoftmaxOf(x, d));
  Tensor spg = functional::Sum(p * gg, DimVector{d}, true, std::nullopt);
  return ProbScale(g, x, reduction) * WeightView(weight, x) * (spg - gg) * (1.0 - label_smoothing);
}

// d ||x1 - x2 + eps||_p / d x1 over the last dim, 0 where the norm is 0 (PyTorch's norm backward;
// ties share the gradient for p = inf).
Tensor PairwiseDistanceGrad(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, double eps,
                            bool keepdim, const Tensor& result) {
  Tensor d = x1 - x2 + eps;
  Tensor r = keepdim ? result : functional::Unsqueeze(result, -1);
  Tensor g = keepdim ? grad : functional::Unsqueeze(grad, -1);
  if (p == 0) return ZerosFor(d);
  if (p == 1) return g * functional::Sgn(d);
  if (std::isinf(p)) {
    Tensor tie = functional::Eq(functional::Abs(d), r);
    Tensor count = functional::Sum(tie, DimVector{-1}, true, std::nullopt);
    return g * functional::Sgn(d) * tie / count;
  }
  Tensor zero = functional::Eq(r, S(0));
  Tensor safe_r = functional::Where(zero, S(1.0), r);
  Tensor num = p == 2 ? d : d * functional::Pow(functional::Abs(d), S(p - 2));
  Tensor den = p == 2 ? safe_r : functional::Pow(safe_r, S(p - 1));
  return Masked(g * num / den, functional::LogicalNot(zero));
}

// cos = sum(a b) / (na nb) with na = max(||a||, eps): d/da = b / (na nb) - sum(a b) / (na^2 nb) a / ||a||.
// The eps clamp is outside the graph (as PyTorch clamps the norms in place under no_grad).
Tensor CosineSimilarityGrad(const Tensor& grad, const Tensor& a, const Tensor& b, int64_t dim, double eps) {
  const DimVector shape = Broadcast(a, b);
  const int d = WrapDim(dim, std::max<int>(1, shape.size()));
  Tensor ae = functional::Expand(a, shape), be = functional::Expand(b, shape);
  Tensor na = functional::Sqrt(functional::Sum(functional::Square(ae), DimVector{d}, true, std::nullopt));
  Tensor nb = functional::Sqrt(functional::Sum(functional::Square(be), DimVector{d}, true, std::nullopt));
  Tensor nac = functional::ClampMin(na, WrappedNumber(Scalar(eps)));
  Tensor nbc = functional::ClampMin(nb, WrappedNumber(Scalar(eps)));
  Tensor dot = functional::Sum(ae * be, DimVector{d}, true, std::nullopt);
  Tensor zero = functional::Eq(na, S(0));
  Tensor unit = Masked(ae / functional::Where(zero, S(1.0), na), functional::LogicalNot(zero));
  Tensor g = functional::Unsqueeze(grad, d);
  return g * (be / (nac * nbc) - dot / (nac * nac * nbc) * unit);
}

// d/dx cos(m1 acos(x) + m2) = m1 sin(m1 theta + m2) / sin(theta) at each row's label column.
Tensor CombinedMarginLossGrad(const Tensor& grad, const Tensor& x, const Tensor& label, double m1, double m2,
                              double) {
  Tensor mask = LabelColumnMask(label, x.sizes());
  Tensor theta = functional::Acos(x);
  Tensor factor = functional::Sin(theta * m1 + m2) * m1 / functional::Sin(theta);
  return functional::Where(mask, grad * factor, grad);
}

}  // namespace oneflow::functional
