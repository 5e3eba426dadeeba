// nll_loss and cross_entropy (src/ops/table/loss.yaml): fused kernels. cross_entropy computes
// log_softmax and the negative log-likelihood in one pass over each row of classes, and its
// backward recomputes the row's log-sum-exp and writes softmax - target in one more pass, so no
// [N, C] log-probability tensor is ever materialised. Inputs are [C], [N, C] or [N, C, d1, ...]
// (classes on dim 1); rows are strided by d1*...*dk in the N-d case. The rows are kernels/nll.h's;
// this file checks the arguments and reduces.
#include "ops/loss_nll.h"
#include "decl/contiguous.h"
#include "decl/cross_entropy.h"
#include "decl/div.h"
#include "decl/empty.h"
#include "decl/nll_loss.h"
#include "decl/reshape.h"
#include "decl/sum.h"



namespace oneflow {

using namespace nll;

namespace {

// The loss from the per-position losses of kernels/nll.h (float64, on the input's device),
// reduced by the table ops there, so a device loss reads no device memory on the host. The mean's
// denominator: the weights of the (host, range-checked) class targets t, or for probability
// targets the number of positions (NaN over no classes, as PyTorch's 0 / 0).
Tensor RowLosses(const Tensor& x, const Tensor& t, const Tensor& q, const ClassGeom& g, const CeArgs& a,
                 const DimVector& out_sizes, DType dtype) {
  const Device dev = x.device();
  const std::vector<double> w = WeightsOf(*a.weight, g.classes);
  Tensor loss = Empty({g.positions()}, DType::kFloat64, dev);
  const ClassRows rows{g.outer, g.classes, g.inner, a.ignore_index, a.smoothing, a.log_softmax};
  ClassRowLosses(x, t.defined() && t.device() != dev ? MovedTo(t, dev) : t, q, VectorTensor(w, dev), rows, loss);
  if (a.reduction == Reduction::kNone) return CastTo(Reshape(loss, out_sizes), dtype);
  Tensor total = Sum(loss, std::nullopt, false, std::nullopt);
  if (a.reduction == Reduction::kMean) {
    const double denom = t.defined()       ? TargetWeightSum(t, w, a.ignore_index)
                         : g.classes == 0 ? 0.0
                                          : static_cast<double>(g.positions());
    total = Div(total, ScalarToTensor(Scalar(denom), DType::kFloat64), std::nullopt);  // over nothing: NaN
  }
  return CastTo(total, dtype);
}

Tensor ClassLoss(const Tensor& input, const Tensor& target, const CeArgs& a) {
  CheckClassTargetShape(input, target);
  CheckSameDevices(input, target, *a.weight);
  const ClassGeom g = GeomOf(input.sizes());
  CheckWeight(*a.weight, g.classes);
  const DimVector out_sizes = a.reduction == Reduction::kNone ? target.sizes() : DimVector{};
  if (input.device().type == DeviceType::kMeta) return Empty(out_sizes, input.dtype(), input.device());
  CheckHasData(target);
  Tensor t = CheckedTargets(target, g.classes, a.ignore_index);
  Tensor x = Contiguous(input);
  return RowLosses(x, t, Tensor(), g, a, out_sizes, input.dtype());
}

// Probability targets: -sum_c w_c q'_c log p_c with q' = (1 - eps) q + eps / C.
Tensor ProbLoss(const Tensor& input, const Tensor& target, const CeArgs& a) {
  OF_CHECK_VALUE(input.dim() >= 1) << "Expected 1 or more dimensions (got 0)";
  CheckSameDevices(input, target, *a.weight);
  const ClassGeom g = GeomOf(input.sizes());
  CheckWeight(*a.weight, g.classes, /*differentiable=*/true);
  DimVector out_sizes;
  if (a.reduction == Reduction::kNone) {
    out_sizes = input.sizes();
    out_sizes.erase(input.dim() == 1 ? 0 : 1);
  }
  if (input.device().type == DeviceType::kMeta) return Empty(out_sizes, input.dtype(), input.device());
  // q read in float64: the input dtype's values exactly (as the loss reads them).
  const Tensor x = Contiguous(input), q = Contiguous(CastTo(CastTo(target, input.dtype()), DType::kFloat64));
  return RowLosses(x, Tensor(), q, g, a, out_sizes, input.dtype());
}

}  // namespace

Tensor NllLoss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
               const std::string& reduction) {
  OpScope scope("nll_loss");
  const CeArgs a{&weight, ignore_index, ParseReduction(reduction), 0.0, false};
  CheckFloatingLossInput(input, "input");
  return ClassLoss(input, target, a);
}

Tensor CrossEntropy(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                    const std::string& reduction, double label_smoothing) {
  OpScope scope("cross_entropy");
  const CeArgs a{&weight, ignore_index, ParseReduction(reduction), label_smoothing, true};
  CheckFloatingLossInput(input, "input");
  OF_CHECK(label_smoothing >= 0 && label_smoothing <= 1)
      << "label_smoothing must be between 0.0 and 1.0. Got: " << label_smoothing;
  if (IsProbTarget(input, target)) return ProbLoss(input, target, a);
  return ClassLoss(input, target, a);
}

}  // namespace oneflow
