// nll_loss and cross_entropy (src/ops/table/loss.yaml): fused kernels. cross_entropy computes
// log_softmax and the negative log-likelihood in one pass over each row of classes, and its
// backward recomputes the row's log-sum-exp and writes softmax - target in one more pass, so no
// [N, C] log-probability tensor is ever materialised. Inputs are [C], [N, C] or [N, C, d1, ...]
// (classes on dim 1); rows are strided by d1*...*dk in the N-d case.
#include "ops/loss_nll.h"
#include "decl/contiguous.h"
#include "decl/cross_entropy.h"
#include "decl/div.h"
#include "decl/empty.h"
#include "decl/nll_loss.h"
#include "decl/reshape.h"
#include "decl/sum.h"


#ifdef ONEFLOW_WITH_CUDA
#include "cuda/ops.h"
#endif

namespace oneflow {

using namespace nll;

namespace {

// Per-position losses and their weights (w_y, 0 when ignored) of a class-index target.
template <typename T>
void ClassLosses(const Tensor& x, const Tensor& t, const ClassGeom& g, const CeArgs& a,
                 std::vector<double>& loss, std::vector<double>& wsum) {
  using M = OpMath<T>;
  const std::vector<double> w = WeightsOf(*a.weight, g.classes);
  const T* xp = x.data<T>();
  const int64_t* tp = t.data<int64_t>();
  const double eps = a.smoothing, C = static_cast<double>(g.classes);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.classes));
  ParallelFor(0, g.positions(), grain, [&](int64_t b, int64_t e) {
    for (int64_t pos = b; pos < e; ++pos) {
      const int64_t o = pos / g.inner, k = pos % g.inner, y = tp[pos];
      if (y == a.ignore_index) {
        loss[pos] = wsum[pos] = 0;
        continue;
      }
      const T* row = xp + o * g.classes * g.inner + k;
      // -log p_c: from the row's log-sum-exp (cross_entropy), or -x_c (nll_loss on log-probabilities)
      const RowLse<M> lse = a.log_softmax ? RowLogSumExp<T>(row, g.classes, g.inner) : RowLse<M>{0, 0};
      double l = w[y] * lse.NegLogP(static_cast<M>(row[y * g.inner]));
      if (eps > 0) {
        double smooth = 0;
        for (int64_t c = 0; c < g.classes; ++c)
          smooth += w[c] * lse.NegLogP(static_cast<M>(row[c * g.inner]));
        l = (1 - eps) * l + eps / C * smooth;
      }
      loss[pos] = l;
      wsum[pos] = w[y];
    }
  });
}

// The loss of CUDA rows (cuda/ops.h): per-position losses on the device (float64), reduced
// there, so only the targets' range check reads device memory on the host. The mean's
// denominator (the weights of the targets) is summed from the host targets t; probability
// targets (q on the device, float64) divide by the number of positions.
Tensor DeviceLoss(const Tensor& x, const Tensor& t, const Tensor& q, const ClassGeom& g, const CeArgs& a,
                  const DimVector& out_sizes, DType dtype) {
#ifdef ONEFLOW_WITH_CUDA
  const Device dev = x.device();
  const std::vector<double> w = WeightsOf(*a.weight, g.classes);
  Tensor dloss = Empty({g.positions()}, DType::kFloat64, dev);
  const cuda::ClassRows rows{g.outer, g.classes, g.inner, a.ignore_index, a.smoothing, a.log_softmax};
  cuda::ClassRowLosses(x, t.defined() ? MovedTo(t, dev) : Tensor(), q, VectorTensor(w, dev), rows, dloss);
  if (a.reduction == Reduction::kNone) return CastTo(Reshape(dloss, out_sizes), dtype);
  Tensor total = Sum(dloss, std::nullopt, false, std::nullopt);
  if (a.reduction == Reduction::kMean) {
    const double denom = t.defined() ? TargetWeightSum(t, w, a.ignore_index) : static_cast<double>(g.positions());
    total = Div(total, ScalarToTensor(Scalar(denom), DType::kFloat64), std::nullopt);  // over nothing: NaN
  }
  return CastTo(total, dtype);
#else
  OF_THROW(kRuntime) << "this build has no CUDA backend";
#endif
}

// The reduced (or per-position) output from per-position losses.
Tensor FinishLoss(const std::vector<double>& loss, const std::vector<double>& wsum, double denom_override,
                  Reduction r, const DimVector& target_sizes, DType dtype) {
  if (r == Reduction::kNone) {
    Tensor out = Empty(target_sizes, dtype);
    DispatchFloat(dtype, [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      for (size_t i = 0; i < loss.size(); ++i) out.data<T>()[i] = static_cast<T>(static_cast<OpMath<T>>(loss[i]));
    });
    return out;
  }
  double total = 0, denom = 0;
  for (size_t i = 0; i < loss.size(); ++i) total += loss[i], denom += wsum[i];
  if (denom_override >= 0) denom = denom_override;
  const double v = r == Reduction::kSum ? total : total / denom;  // mean over nothing is NaN
  return ScalarToTensor(Scalar(v), dtype);
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
  if (OnCuda(x)) return DeviceLoss(x, t, Tensor(), g, a, out_sizes, input.dtype());
  std::vector<double> loss(g.positions()), wsum(g.positions());
  DispatchFloat(x.dtype(), [&](auto tag) {
    ClassLosses<typename std::decay_t<decltype(tag)>::type>(x, t, g, a, loss, wsum);
  });
  return FinishLoss(loss, wsum, -1, a.reduction, out_sizes, input.dtype());
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
  Tensor x = Contiguous(input), q = Contiguous(CastTo(target, input.dtype()));
  if (OnCuda(x)) return DeviceLoss(x, Tensor(), CastTo(q, DType::kFloat64), g, a, out_sizes, input.dtype());
  std::vector<double> loss(g.positions()), wsum(g.positions(), 0.0);
  const std::vector<double> w = WeightsOf(*a.weight, g.classes);
  const double eps = a.smoothing, C = static_cast<double>(g.classes);
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    const T* qp = q.data<T>();
    ParallelFor(0, g.positions(), std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.classes)),
                [&](int64_t b, int64_t e) {
      for (int64_t pos = b; pos < e; ++pos) {
        const int64_t base = (pos / g.inner) * g.classes * g.inner + pos % g.inner;
        const RowLse<M> lse = RowLogSumExp<T>(xp + base, g.classes, g.inner);
        double l = 0;
        for (int64_t c = 0; c < g.classes; ++c) {
          const double qc = (1 - eps) * static_cast<double>(static_cast<M>(qp[base + c * g.inner])) + eps / C;
          l += w[c] * qc * lse.NegLogP(static_cast<M>(xp[base + c * g.inner]));
        }
        loss[pos] = l;
      }
    });
  });
  // The mean is over input.numel() / C positions, as PyTorch's: NaN (0 / 0) when there are no classes.
  return FinishLoss(loss, wsum, g.classes == 0 ? 0.0 : static_cast<double>(g.positions()), a.reduction, out_sizes,
                    input.dtype());
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
