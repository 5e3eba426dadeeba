// Elementwise losses (src/ops/table/loss.yaml): one fused pass through the pointwise engine for
// the elementwise term, then the reduction. Their gradients are formulas over table ops
// (src/autograd/formulas/loss.cpp). Also the shared helpers of ops/loss_common.h.
#include "autograd/grad_mode.h"
#include "kernels/functors/loss.h"
#include "ops/loss_common.h"
#include "ops/pointwise.h"
#include "decl/any.h"
#include "decl/binary_cross_entropy.h"
#include "decl/binary_cross_entropy_with_logits.h"
#include "decl/div.h"
#include "decl/gt.h"
#include "decl/huber_loss.h"
#include "decl/kl_div.h"
#include "decl/l1_loss.h"
#include "decl/logical_or.h"
#include "decl/lt.h"
#include "decl/margin_ranking_loss.h"
#include "decl/mean.h"
#include "decl/mse_loss.h"
#include "decl/mul.h"
#include "decl/smooth_l1_loss.h"
#include "decl/soft_margin_loss.h"
#include "decl/sum.h"

namespace oneflow {

Reduction ParseReduction(const std::string& reduction) {
  if (reduction == "none") return Reduction::kNone;
  if (reduction == "mean") return Reduction::kMean;
  if (reduction == "sum") return Reduction::kSum;
  OF_THROW(kValue) << reduction << " is not a valid value for reduction";
}

Tensor ApplyReduction(const Tensor& elem, Reduction r) {
  if (r == Reduction::kNone) return elem;
  if (r == Reduction::kSum) return Sum(elem, std::nullopt, false, std::nullopt);
  return Mean(elem, std::nullopt, false, std::nullopt);
}

void CheckFloatingLossInput(const Tensor& t, const char* what) {
  OF_CHECK(IsFloating(t.dtype())) << "expected a floating point " << what << ", got "
                                  << DTypeName(t.dtype());
}

void CheckNoGradFor(const Tensor& t, const char* arg) {
  OF_CHECK(!(t.defined() && t.requires_grad() && GradMode::is_enabled()))
      << "the function '" << OpScope::Current() << "' is not differentiable with respect to argument '"
      << arg << "'";
}

void CheckClassIndexTarget(const Tensor& target) {
  OF_CHECK(!IsFloating(target.dtype()) && !IsComplex(target.dtype()) && target.dtype() != DType::kBool)
      << "expected target dtype to be an integer type (class indices), but got "
      << DTypeName(target.dtype());
}

namespace {

template <typename F>
Tensor PairLoss(const Tensor& input, const Tensor& target, const std::string& reduction, const F& f) {
  const Reduction r = ParseReduction(reduction);
  CheckFloatingLossInput(input, "input");
  CheckFloatingLossInput(target, "target");
  return ApplyReduction(BinaryOp<F, ResultKind::kSame, DTypeSet::kFloat>(input, target, f), r);
}

void CheckSameSize(const Tensor& input, const Tensor& target, bool bce) {
  if (input.sizes() == target.sizes()) return;
  if (bce) {
    OF_THROW(kValue) << "Using a target size (" << ShapeStr(target.sizes())
                     << ") that is different to the input size (" << ShapeStr(input.sizes())
                     << ") is deprecated. Please ensure they have the same size.";
  }
  OF_THROW(kValue) << "Target size (" << ShapeStr(target.sizes()) << ") must be the same as input size ("
                   << ShapeStr(input.sizes()) << ")";
}

// `weight` (optional) broadcast to the elementwise loss's shape, as a factor.
Tensor Weighted(const Tensor& elem, const Tensor& weight) {
  if (!weight.defined()) return elem;
  OF_CHECK(BroadcastShapes(elem.sizes(), weight.sizes()) == elem.sizes())
      << "the weight of shape " << ShapeStr(weight.sizes()) << " does not broadcast to the loss's shape "
      << ShapeStr(elem.sizes());
  // PyTorch writes the weighted loss into the loss's dtype: a complex weight of a real loss is
  // refused there (promoting made the loss complex).
  OF_CHECK(!IsComplex(weight.dtype()) || IsComplex(elem.dtype()))
      << "result type " << DTypeName(weight.dtype()) << " can't be cast to the desired output type "
      << DTypeName(elem.dtype()) << " (a complex weight of a real loss)";
  return Mul(elem, weight);
}

}  // namespace

Tensor MseLoss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  OpScope scope("mse_loss");
  return PairLoss(input, target, reduction, MseLossFunctor{});
}

Tensor L1Loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  OpScope scope("l1_loss");
  return PairLoss(input, target, reduction, L1LossFunctor{});
}

Tensor SmoothL1Loss(const Tensor& input, const Tensor& target, const std::string& reduction, double beta) {
  OpScope scope("smooth_l1_loss");
  OF_CHECK(beta >= 0) << "smooth_l1_loss does not support negative values for beta.";
  return PairLoss(input, target, reduction, SmoothL1LossFunctor{beta});
}

Tensor HuberLoss(const Tensor& input, const Tensor& target, const std::string& reduction, double delta) {
  OpScope scope("huber_loss");
  OF_CHECK(delta > 0) << "huber_loss does not support non-positive values for delta.";
  return PairLoss(input, target, reduction, HuberLossFunctor{delta});
}

Tensor SoftMarginLoss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  OpScope scope("soft_margin_loss");
  CheckNoGradFor(target, "target");
  return PairLoss(input, target, reduction, SoftMarginLossFunctor{});
}

Tensor BinaryCrossEntropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                          const std::string& reduction) {
  OpScope scope("binary_cross_entropy");
  const Reduction r = ParseReduction(reduction);
  CheckSameSize(input, target, true);
  CheckFloatingLossInput(input, "input");
  CheckNoGradFor(weight, "weight");
  if (input.device().type != DeviceType::kMeta && input.numel() > 0) {
    CheckHasData(input);
    Tensor outside = LogicalOr(Lt(input, WrappedNumber(Scalar(0))), Gt(input, WrappedNumber(Scalar(1))));
    OF_CHECK(!ItemOf(Any(outside, std::nullopt, false)).ToInt())
        << "all elements of input should be between 0 and 1";
  }
  Tensor elem = BinaryOp<BinaryCrossEntropyFunctor, ResultKind::kSame, DTypeSet::kFloat>(input, target);
  return ApplyReduction(Weighted(elem, weight), r);
}

Tensor BinaryCrossEntropyWithLogits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                    const Tensor& pos_weight, const std::string& reduction) {
  OpScope scope("binary_cross_entropy_with_logits");
  const Reduction r = ParseReduction(reduction);
  CheckSameSize(input, target, false);
  CheckFloatingLossInput(input, "input");
  // PyTorch computes in the target's dtype and refuses an integer or bool one (the result cannot
  // be cast back); promoting it gave a loss of labels no float target would have.
  OF_CHECK(IsFloating(target.dtype()))
      << "result type " << DTypeName(input.dtype()) << " can't be cast to the desired output type "
      << DTypeName(target.dtype()) << " (the target must be floating point)";
  CheckNoGradFor(weight, "weight");
  CheckNoGradFor(pos_weight, "pos_weight");
  // PyTorch's formula subtracts from pos_weight (pos_weight - 1): a bool one is refused there.
  OF_CHECK(!pos_weight.defined() || pos_weight.dtype() != DType::kBool)
      << "Subtraction, the `-` operator, with a bool tensor is not supported (a bool pos_weight)";
  const Tensor pw = pos_weight.defined() ? pos_weight : WrappedNumber(Scalar(1.0));
  OF_CHECK(BroadcastShapes(input.sizes(), pw.sizes()) == input.sizes())
      << "pos_weight of shape " << ShapeStr(pw.sizes()) << " does not broadcast to the input's shape "
      << ShapeStr(input.sizes());
  Tensor elem = TernaryOp<BceWithLogitsFunctor, ResultKind::kSame, DTypeSet::kFloat>(input, target, pw);
  return ApplyReduction(Weighted(elem, weight), r);
}

// 'batchmean' is the sum divided by the batch size (dim 0), the true KL divergence per sample.
Tensor KlDiv(const Tensor& input, const Tensor& target, const std::string& reduction, bool log_target) {
  OpScope scope("kl_div");
  const bool batchmean = reduction == "batchmean";
  const Reduction r = batchmean ? Reduction::kSum : ParseReduction(reduction);
  CheckFloatingLossInput(input, "input");
  // PyTorch's check: an integer or bool target is refused, not promoted.
  OF_CHECK(IsFloating(target.dtype()) || IsComplex(target.dtype()))
      << "Integral inputs not supported (target is " << DTypeName(target.dtype()) << ")";
  Tensor elem = BinaryOp<KlDivFunctor, ResultKind::kSame, DTypeSet::kFloat>(input, target, KlDivFunctor{log_target});
  Tensor out = ApplyReduction(elem, r);
  if (batchmean && input.dim() > 0) out = Div(out, WrappedNumber(Scalar(input.sizes()[0])), std::nullopt);
  return out;
}

Tensor MarginRankingLoss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                         const std::string& reduction) {
  OpScope scope("margin_ranking_loss");
  const Reduction r = ParseReduction(reduction);
  OF_CHECK(input1.dim() == input2.dim() && input1.dim() == target.dim())
      << "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
      << ShapeStr(input1.sizes()) << ", input2: " << ShapeStr(input2.sizes())
      << ", target: " << ShapeStr(target.sizes());
  CheckFloatingLossInput(input1, "input1");
  // PyTorch's loss negates the target: a bool one is refused there, not read as 0 / 1.
  OF_CHECK(target.dtype() != DType::kBool)
      << "Negation, the `-` operator, on a bool target is not supported (got a bool target)";
  Tensor elem = TernaryOp<MarginRankingLossFunctor, ResultKind::kSame, DTypeSet::kFloat>(
      input1, input2, target, MarginRankingLossFunctor{margin});
  return ApplyReduction(elem, r);
}

}  // namespace oneflow
