// Backward kernels of nll_loss and cross_entropy (src/ops/table/loss.yaml).
// cross_entropy: d loss / d x_c = s * (A p_c - B_c) at each position, p = softmax of the row,
//   class target y:        A = (1 - e) w_y + e/C sum_c w_c,  B_c = (1 - e) w_y [c = y] + e/C w_c
//   probability target q:  A = sum_c w_c q'_c,               B_c = w_c q'_c,  q' = (1 - e) q + e/C
// with s the incoming gradient (divided by the mean's denominator) and 0 at ignored positions.
#include "ops/loss_nll.h"
#include "decl/contiguous.h"
#include "decl/cross_entropy_backward.h"
#include "decl/div.h"
#include "decl/empty.h"
#include "decl/nll_loss_backward.h"
#include "decl/reshape.h"
#include "decl/where.h"
#ifdef ONEFLOW_WITH_CUDA
#include "cuda/ops.h"
#endif

namespace oneflow {

using namespace nll;

namespace {

// Per-position gradient scales s (0 at ignored positions) and, for class targets, the mean's
// denominator sum of w_y.
std::vector<double> PositionScales(const Tensor& grad_output, const Tensor* t, const std::vector<double>& w,
                                   int64_t positions, int64_t ignore_index, Reduction r, double prob_denom) {
  Tensor g = Contiguous(CastTo(OnHost(grad_output), DType::kFloat64));
  const double* gp = g.data<double>();
  std::vector<double> s(positions);
  const double denom = t != nullptr && r == Reduction::kMean ? TargetWeightSum(*t, w, ignore_index) : prob_denom;
  for (int64_t i = 0; i < positions; ++i) {
    const bool ignored = t != nullptr && t->data<int64_t>()[i] == ignore_index;
    const double gi = r == Reduction::kNone ? gp[i] : gp[0];
    s[i] = ignored ? 0.0 : (r == Reduction::kMean ? gi / denom : gi);
  }
  return s;
}

#ifdef ONEFLOW_WITH_CUDA
// PositionScales on the device (float64 [positions]): the incoming gradient is never read on the
// host, so the backward does not wait for the forward's kernels. The mask of kept positions and
// the mean's denominator come from the host targets (the range check read them anyway).
Tensor DeviceScales(const Tensor& grad_output, const Tensor* t, const std::vector<double>& w, int64_t positions,
                    int64_t ignore_index, Reduction r, double prob_denom, const Device& dev) {
  Tensor g = Reshape(Contiguous(CastTo(grad_output, DType::kFloat64)), DimVector{r == Reduction::kNone ? positions : 1});
  Tensor keep = Empty(DimVector{positions}, DType::kBool);
  bool* kp = keep.data<bool>();
  if (t != nullptr) {
    const int64_t* tp = t->data<int64_t>();
    for (int64_t i = 0; i < positions; ++i) kp[i] = tp[i] != ignore_index;
  } else {
    std::fill(kp, kp + positions, true);
  }
  const double denom = t != nullptr ? TargetWeightSum(*t, w, ignore_index) : prob_denom;
  if (r == Reduction::kMean) g = Div(g, ScalarToTensor(Scalar(denom), DType::kFloat64), std::nullopt);
  return Where(MovedTo(keep, dev), g.device() == dev ? g : MovedTo(g, dev), ScalarToTensor(Scalar(0.0), DType::kFloat64));
}
#endif

void CheckGradShape(const Tensor& grad_output, Reduction r, const DimVector& want) {
  const DimVector expect = r == Reduction::kNone ? want : DimVector{};
  OF_CHECK(grad_output.sizes() == expect) << "grad_output of shape " << ShapeStr(grad_output.sizes())
                                          << " where " << ShapeStr(expect) << " was expected";
}

}  // namespace

Tensor NllLossBackward(const Tensor& grad_output, const Tensor& target, const Tensor& weight,
                       const DimVector& input_sizes, int64_t ignore_index, const std::string& reduction) {
  OpScope scope("nll_loss_backward");
  const Reduction r = ParseReduction(reduction);
  CheckFloatingLossInput(grad_output, "grad_output");
  Tensor shape_probe = Empty(input_sizes, grad_output.dtype(), Device{DeviceType::kMeta, -1});
  CheckClassTargetShape(shape_probe, target);
  CheckSameDevices(grad_output, target, weight);
  const ClassGeom g = GeomOf(input_sizes);
  CheckWeight(weight, g.classes);
  CheckGradShape(grad_output, r, target.sizes());
  Tensor out = Empty(input_sizes, grad_output.dtype(), grad_output.device());
  if (out.device().type == DeviceType::kMeta) return out;
  FillWith(out, Scalar(0));
  Tensor t = CheckedTargets(target, g.classes, ignore_index);
  const std::vector<double> w = WeightsOf(weight, g.classes);
#ifdef ONEFLOW_WITH_CUDA
  if (OnCuda(out)) {
    const Device dev = out.device();
    cuda::NllRowGrads(MovedTo(t, dev), VectorTensor(w, dev),
                      DeviceScales(grad_output, &t, w, g.positions(), ignore_index, r, 0, dev),
                      {g.outer, g.classes, g.inner, ignore_index, 0.0, false}, out);
    return out;
  }
#endif
  const std::vector<double> s = PositionScales(grad_output, &t, w, g.positions(), ignore_index, r, 0);
  const int64_t* tp = t.data<int64_t>();
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* op = out.data<T>();
    for (int64_t pos = 0; pos < g.positions(); ++pos) {
      if (tp[pos] == ignore_index) continue;
      const int64_t o = pos / g.inner, k = pos % g.inner;
      op[(o * g.classes + tp[pos]) * g.inner + k] = static_cast<T>(static_cast<OpMath<T>>(-w[tp[pos]] * s[pos]));
    }
  });
  return out;
}

Tensor CrossEntropyBackward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                            const Tensor& weight, int64_t ignore_index, const std::string& reduction,
                            double label_smoothing) {
  OpScope scope("cross_entropy_backward");
  const Reduction r = ParseReduction(reduction);
  CheckFloatingLossInput(input, "input");
  const bool prob = IsProbTarget(input, target);
  if (!prob) CheckClassTargetShape(input, target);
  CheckSameDevices(input, target, weight);
  CheckSameDevice(input, grad_output);
  const ClassGeom g = GeomOf(input.sizes());
  CheckWeight(weight, g.classes, /*differentiable=*/prob);
  DimVector pos_sizes = input.sizes();
  pos_sizes.erase(input.dim() == 1 ? 0 : 1);
  CheckGradShape(grad_output, r, prob ? pos_sizes : target.sizes());
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  if (out.device().type == DeviceType::kMeta) return out;
  Tensor t = prob ? Tensor() : CheckedTargets(target, g.classes, ignore_index);
  Tensor q = prob ? Contiguous(CastTo(target, DType::kFloat64)) : Tensor();
  Tensor x = Contiguous(input);
  const std::vector<double> w = WeightsOf(weight, g.classes);
  double wall = 0;
  for (double v : w) wall += v;
  const double eps = label_smoothing, C = static_cast<double>(g.classes);
#ifdef ONEFLOW_WITH_CUDA
  if (OnCuda(out)) {
    const Device dev = out.device();
    const Tensor s = DeviceScales(grad_output, prob ? nullptr : &t, w, g.positions(), ignore_index, r,
                                  static_cast<double>(g.positions()), dev);
    cuda::CrossEntropyRowGrads(x, prob ? Tensor() : MovedTo(t, dev), q, VectorTensor(w, dev), s,
                               {g.outer, g.classes, g.inner, ignore_index, eps, true}, wall, out);
    return out;
  }
#endif
  const std::vector<double> s = PositionScales(grad_output, prob ? nullptr : &t, w, g.positions(),
                                               ignore_index, r, static_cast<double>(g.positions()));
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.classes));
    ParallelFor(0, g.positions(), grain, [&](int64_t b, int64_t e) {
      for (int64_t pos = b; pos < e; ++pos) {
        const int64_t base = (pos / g.inner) * g.classes * g.inner + pos % g.inner, st = g.inner;
        const T* row = xp + base;
        T* orow = op + base;
        if (s[pos] == 0) {
          for (int64_t c = 0; c < g.classes; ++c) orow[c * st] = static_cast<T>(M(0));
          continue;
        }
        if constexpr (std::is_same_v<T, M>) {
          if (!prob && st == 1) {
            // The common case: contiguous float/double rows. softmax = e / sum(e) with
            // e = exp(x - max) written into the output row, then scaled in place: one exp per
            // class (the row stays in L1 between the passes).
            const int64_t y = t.data<int64_t>()[pos];
            const M sa = static_cast<M>(s[pos] * ((1 - eps) * w[y] + eps / C * wall));
            const M sb = static_cast<M>(s[pos] * eps / C);
            const M k = sa / SoftmaxNumerators(row, orow, g.classes);
            if (!weight.defined()) {
              for (int64_t c = 0; c < g.classes; ++c) orow[c] = static_cast<T>(k * orow[c] - sb);
            } else {
              for (int64_t c = 0; c < g.classes; ++c) orow[c] = static_cast<T>(k * orow[c] - sb * static_cast<M>(w[c]));
            }
            orow[y] = static_cast<T>(static_cast<M>(orow[y]) - static_cast<M>(s[pos] * (1 - eps) * w[y]));
            continue;
          }
        }
        const RowLse<M> lse = RowLogSumExp<T>(row, g.classes, st);
        if (!prob) {
          const int64_t y = t.data<int64_t>()[pos];
          const M sa = static_cast<M>(s[pos] * ((1 - eps) * w[y] + eps / C * wall));
          const M sb = static_cast<M>(s[pos] * eps / C);
          for (int64_t c = 0; c < g.classes; ++c)
            orow[c * st] = static_cast<T>(sa * VecExp(lse.LogP(static_cast<M>(row[c * st]))) -
                                          sb * static_cast<M>(w[c]));
          const M fix = static_cast<M>(orow[y * st]) - static_cast<M>(s[pos] * (1 - eps) * w[y]);
          orow[y * st] = static_cast<T>(fix);
        } else {
          const double* qp = q.data<double>() + base;
          double a = 0;
          for (int64_t c = 0; c < g.classes; ++c) a += w[c] * ((1 - eps) * qp[c * st] + eps / C);
          for (int64_t c = 0; c < g.classes; ++c) {
            const double qc = (1 - eps) * qp[c * st] + eps / C;
            const double p = std::exp(-lse.NegLogP(static_cast<M>(row[c * st])));
            orow[c * st] = static_cast<T>(static_cast<M>(s[pos] * (a * p - w[c] * qc)));
          }
        }
      }
    });
  });
  return out;
}

Tensor CrossEntropyClassFactor(const Tensor& target, const Tensor& weight, const DimVector& input_sizes,
                               int64_t ignore_index, const std::string& reduction,
                               double label_smoothing, DType dtype) {
  const Reduction r = ParseReduction(reduction);
  const ClassGeom g = GeomOf(input_sizes);
  Tensor t = CheckedTargets(target, g.classes, ignore_index);
  const std::vector<double> w = WeightsOf(weight, g.classes);
  double wall = 0;
  for (double v : w) wall += v;
  Tensor ones = ScalarToTensor(Scalar(1.0), DType::kFloat64);
  const std::vector<double> s = PositionScales(ones, &t, w, g.positions(), ignore_index,
                                               r == Reduction::kNone ? Reduction::kSum : r, 0);
  Tensor f = Empty(target.sizes(), dtype);
  const double eps = label_smoothing, C = static_cast<double>(g.classes);
  DispatchFloat(dtype, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    for (int64_t pos = 0; pos < g.positions(); ++pos) {
      const int64_t y = t.data<int64_t>()[pos];
      const double a = y == ignore_index ? 0.0 : (1 - eps) * w[y] + eps / C * wall;
      f.data<T>()[pos] = static_cast<T>(static_cast<OpMath<T>>(s[pos] * a));
    }
  });
  return MovedTo(f, target.device());
}

}  // namespace oneflow
