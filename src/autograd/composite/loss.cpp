// Differentiable entries of the composite losses (`backward: manual` in src/ops/table/loss.yaml):
// compositions of table ops in PyTorch's formulation, so that their gradients (and PyTorch's
// conventions at the kinks) come from the parts.
#include <cmath>

#include "autograd/autocast.h"
#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "ops/loss_common.h"
#include "decl/any.h"
#include "decl/cast.h"
#include "decl/clamp_min.h"
#include "decl/cosine_embedding_loss.h"
#include "decl/eq.h"
#include "decl/exp.h"
#include "decl/gaussian_nll_loss.h"
#include "decl/gt.h"
#include "decl/hinge_embedding_loss.h"
#include "decl/log.h"
#include "decl/logsigmoid.h"
#include "decl/lt.h"
#include "decl/mean.h"
#include "decl/minimum.h"
#include "decl/multilabel_soft_margin_loss.h"
#include "decl/ne.h"
#include "decl/pairwise_distance.h"
#include "decl/poisson_nll_loss.h"
#include "decl/sqrt.h"
#include "decl/square.h"
#include "decl/sub.h"
#include "decl/sum.h"
#include "decl/triplet_margin_loss.h"
#include "decl/unsqueeze.h"
#include "decl/where.h"

namespace oneflow::functional {

namespace {

Tensor Reduce(const Tensor& elem, const std::string& reduction) {
  switch (ParseReduction(reduction)) {
    case Reduction::kNone: return elem;
    case Reduction::kSum: return functional::Sum(elem, std::nullopt, false, std::nullopt);
    case Reduction::kMean: return functional::Mean(elem, std::nullopt, false, std::nullopt);
  }
  return elem;
}

Tensor ClampMin(const Tensor& x, double lo) { return functional::ClampMin(x, WrappedNumber(Scalar(lo))); }

}  // namespace

// x where y == 1, max(0, margin - x) where y == -1 (other target values get both terms).
Tensor HingeEmbeddingLoss(const Tensor& input, const Tensor& target, double margin, const std::string& reduction) {
  OpScope scope("hinge_embedding_loss");
  if (autocast::IsActive()) [[unlikely]] {
    // PyTorch's CPU autocast float32 list (a hand-written entry: the table's `autocast:` is for
    // generated ones): 16-bit inputs run in float32.
    if (auto dt = autocast::TargetOf(autocast::Policy::kFp32, input, target)) {
      autocast::ExcludeGuard guard;
      return functional::HingeEmbeddingLoss(autocast::Cast(input, *dt), autocast::Cast(target, *dt), margin, reduction);
    }
  }
  ParseReduction(reduction);
  CheckFloatingLossInput(input, "input");
  Tensor hinge = functional::Where(functional::Ne(target, S(1)), ClampMin(margin - input, 0), S(0));
  Tensor self = functional::Where(functional::Ne(target, S(-1)), input, S(0));
  return Reduce(hinge + self, reduction);
}

// 1 - cos(x1, x2) where y == 1, max(0, cos - margin) where y == -1; cos over the last dim with
// 1e-12 added to each squared norm (PyTorch's formulation).
Tensor CosineEmbeddingLoss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           const std::string& reduction) {
  OpScope scope("cosine_embedding_loss");
  ParseReduction(reduction);
  CheckFloatingLossInput(input1, "input1");
  OF_CHECK(input1.dim() == input2.dim() && (input1.dim() == 1 || input1.dim() == 2))
      << "cosine_embedding_loss expects 1-D or 2-D inputs of the same dimension, got "
      << ShapeStr(input1.sizes()) << " and " << ShapeStr(input2.sizes());
  OF_CHECK(target.dim() == input1.dim() - 1)
      << "0D target tensor expects 1D input tensors, and 1D target tensor expects 2D input tensors, got target "
      << ShapeStr(target.sizes());
  const DimVector last{-1};
  Tensor prod = functional::Sum(input1 * input2, last, false, std::nullopt);
  Tensor m1 = functional::Sum(input1 * input1, last, false, std::nullopt) + 1e-12;
  Tensor m2 = functional::Sum(input2 * input2, last, false, std::nullopt) + 1e-12;
  Tensor cos = prod / functional::Sqrt(m1 * m2);
  Tensor pos = functional::Where(functional::Eq(target, S(1)), 1.0 - cos, S(0));
  Tensor neg = functional::Where(functional::Eq(target, S(-1)), ClampMin(cos - margin, 0), S(0));
  return Reduce(pos + neg, reduction);
}

// -(y logsigmoid(x) + (1 - y) logsigmoid(-x)), weighted, averaged over the classes (last dim).
Tensor MultilabelSoftMarginLoss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                const std::string& reduction) {
  OpScope scope("multilabel_soft_margin_loss");
  ParseReduction(reduction);
  CheckFloatingLossInput(input, "input");
  OF_CHECK(input.dim() >= 1) << "multilabel_soft_margin_loss expects an input with a class dim";
  // 1 - target: PyTorch refuses the subtraction of a bool target rather than reading it as 0 / 1.
  OF_CHECK(target.dtype() != DType::kBool)
      << "Subtraction, the `-` operator, with a bool target is not supported";
  Tensor loss = -(target * functional::Logsigmoid(input) + (1.0 - target) * functional::Logsigmoid(-input));
  if (weight.defined()) loss = loss * weight;
  const int class_dim = input.dim() - 1;
  loss = functional::Sum(loss, DimVector{class_dim}, false, std::nullopt) /
         static_cast<double>(input.sizes()[class_dim]);
  return Reduce(loss, reduction);
}

// exp(x) - y x (log_input) or x - y log(x + eps); `full` adds Stirling's term where y > 1.
Tensor PoissonNllLoss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                      const std::string& reduction) {
  OpScope scope("poisson_nll_loss");
  ParseReduction(reduction);
  CheckFloatingLossInput(input, "input");
  Tensor loss = log_input ? functional::Exp(input) - target * input
                          : input - target * functional::Log(input + eps);
  if (full) {
    Tensor stirling = target * functional::Log(target) - target + functional::Log(target * (2 * M_PI)) * 0.5;
    loss = loss + functional::Where(functional::Gt(target, S(1)), stirling, S(0));
  }
  return Reduce(loss, reduction);
}

// 0.5 (log(max(var, eps)) + (x - y)^2 / max(var, eps)) (+ 0.5 log(2 pi) when full). The clamp of
// var is outside the graph, as PyTorch clamps a clone in place under no_grad.
Tensor GaussianNllLoss(const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
                       const std::string& reduction) {
  OpScope scope("gaussian_nll_loss");
  ParseReduction(reduction);
  CheckFloatingLossInput(input, "input");
  Tensor v = var;
  if (v.sizes() != input.sizes()) {
    DimVector head = input.sizes();
    if (!head.empty()) head.erase(head.size() - 1);
    if (input.dim() >= 1 && v.sizes() == head) {
      v = functional::Unsqueeze(v, -1);  // one variance per sample
    } else {
      OF_CHECK_VALUE(input.dim() >= 1 && v.dim() == input.dim() && v.sizes().back() == 1 &&
                     BroadcastShapes(v.sizes(), input.sizes()) == input.sizes())
          << "var is of incorrect size";
    }
  }
  if (v.device().type != DeviceType::kMeta && v.numel() > 0) {
    CheckHasData(v);
    OF_CHECK_VALUE(!ItemOf(::oneflow::Any(::oneflow::Lt(v, S(0)), std::nullopt, false)).ToInt())
        << "var has negative entry/entries";
  }
  Tensor shift;
  {
    AutoGradMode no_grad(false);
    shift = ::oneflow::Sub(::oneflow::ClampMin(v, WrappedNumber(Scalar(eps))), v, Scalar(1));
  }
  Tensor vc = v + shift;  // max(v, eps) in value, the gradient of v
  Tensor loss = (functional::Log(vc) + functional::Square(input - target) / vc) * 0.5;
  if (full) loss = loss + 0.5 * std::log(2 * M_PI);
  return Reduce(loss, reduction);
}

// max(d(a, p) - d(a, n) + margin, 0) with d the pairwise distance (swap: d(a, n) replaced by
// min(d(a, n), d(p, n))).
Tensor TripletMarginLoss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                         double p, double eps, bool swap, const std::string& reduction) {
  OpScope scope("triplet_margin_loss");
  if (autocast::IsActive()) [[unlikely]] {
    // PyTorch's CPU autocast float32 list (a hand-written entry: the table's `autocast:` is for
    // generated ones): 16-bit inputs run in float32.
    if (auto dt = autocast::TargetOf(autocast::Policy::kFp32, anchor, positive, negative)) {
      autocast::ExcludeGuard guard;
      return functional::TripletMarginLoss(autocast::Cast(anchor, *dt), autocast::Cast(positive, *dt),
                                           autocast::Cast(negative, *dt), margin, p, eps, swap, reduction);
    }
  }
  ParseReduction(reduction);
  OF_CHECK(anchor.dim() == positive.dim() && anchor.dim() == negative.dim())
      << "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
         "but got: anchor " << anchor.dim() << "D, positive " << positive.dim() << "D, and negative "
      << negative.dim() << "D inputs";
  OF_CHECK_VALUE(margin > 0) << "triplet_margin_loss: expected margin to be greater than 0, got " << margin;
  Tensor dp = functional::PairwiseDistance(anchor, positive, p, eps, false);
  Tensor dn = functional::PairwiseDistance(anchor, negative, p, eps, false);
  if (swap) dn = functional::Minimum(dn, functional::PairwiseDistance(positive, negative, p, eps, false));
  return Reduce(ClampMin(dp - dn + margin, 0), reduction);
}

}  // namespace oneflow::functional
