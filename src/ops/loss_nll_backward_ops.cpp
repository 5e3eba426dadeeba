// Backward kernels of nll_loss and cross_entropy (src/ops/table/loss.yaml).
// cross_entropy: d loss / d x_c = s * (A p_c - B_c) at each position, p = softmax of the row,
//   class target y:        A = (1 - e) w_y + e/C sum_c w_c,  B_c = (1 - e) w_y [c = y] + e/C w_c
//   probability target q:  A = sum_c w_c q'_c,               B_c = w_c q'_c,  q' = (1 - e) q + e/C
// with s the incoming gradient (divided by the mean's denominator) and 0 at ignored positions.
#include "ops/loss_nll.h"
#include "decl/contiguous.h"
#include "decl/cross_entropy_backward.h"
#include "decl/empty.h"
#include "decl/nll_loss_backward.h"

namespace oneflow {

using namespace nll;

namespace {

// The per-position gradient scales s (float64 [positions] on `dev`, 0 at ignored positions):
// the incoming gradient over the mean's denominator (kernels/nll.h). A device's kernel never
// reads the gradient on the host, so its backward does not wait for the forward's kernels; the
// kept positions and the denominator come from the host targets (the range check read them).
Tensor PositionScales(const Tensor& grad_output, const Tensor* t, const std::vector<double>& w, int64_t positions,
                      int64_t ignore_index, Reduction r, double prob_denom, const Device& dev) {
  Tensor g = Contiguous(CastTo(grad_output, DType::kFloat64));
  if (g.device() != dev) g = MovedTo(g, dev);
  const double denom =
      r != Reduction::kMean ? 1.0 : (t != nullptr ? TargetWeightSum(*t, w, ignore_index) : prob_denom);
  Tensor s = Empty(DimVector{positions}, DType::kFloat64, dev);
  NllGradScales(g, t != nullptr ? *t : Tensor(), ignore_index, r == Reduction::kNone, denom, s);
  return s;
}

// The host targets on `dev`.
Tensor TargetsOn(const Tensor& t, const Device& dev) { return t.device() == dev ? t : MovedTo(t, dev); }

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
  const Device dev = out.device();
  NllRowGrads(TargetsOn(t, dev), VectorTensor(w, dev),
              PositionScales(grad_output, &t, w, g.positions(), ignore_index, r, 0, dev),
              {g.outer, g.classes, g.inner, ignore_index, 0.0, false}, out);
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
  const Device dev = out.device();
  const Tensor s = PositionScales(grad_output, prob ? nullptr : &t, w, g.positions(), ignore_index, r,
                                  static_cast<double>(g.positions()), dev);
  CrossEntropyRowGrads(x, prob ? Tensor() : TargetsOn(t, dev), q, VectorTensor(w, dev), s,
                       {g.outer, g.classes, g.inner, ignore_index, label_smoothing, true}, wall, out);
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
  const Tensor s = PositionScales(ones, &t, w, g.positions(), ignore_index,
                                  r == Reduction::kNone ? Reduction::kSum : r, 0, Device{});
  const double* sp = s.data<double>();
  const double eps = label_smoothing, C = static_cast<double>(g.classes);
  Tensor f = Empty(target.sizes(), dtype);
  DispatchFloat(dtype, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    for (int64_t pos = 0; pos < g.positions(); ++pos) {
      const int64_t y = t.data<int64_t>()[pos];
      const double a = y == ignore_index ? 0.0 : (1 - eps) * w[y] + eps / C * wall;
      f.data<T>()[pos] = static_cast<T>(static_cast<OpMath<T>>(sp[pos] * a));
    }
  });
  return MovedTo(f, target.device());
}

}  // namespace oneflow
