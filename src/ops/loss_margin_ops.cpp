// Distances and margin losses (src/ops/table/loss.yaml): pairwise_distance and
// cosine_similarity (compositions of kernels; formulas backward), multi_margin_loss and
// multilabel_margin_loss (loops over rows, with their backward kernels), and OneFlow's
// combined_margin_loss.
#include <cmath>
#include <vector>

#include "ops/copy.h"
#include "ops/loss_common.h"
#include "kernels/margin_loss.h"
#include "ops/promotion.h"
#include "decl/abs.h"
#include "decl/acos.h"
#include "decl/add.h"
#include "decl/amax.h"
#include "decl/amin.h"
#include "decl/arange.h"
#include "decl/clamp_min.h"
#include "decl/combined_margin_loss.h"
#include "decl/contiguous.h"
#include "decl/cos.h"
#include "decl/cosine_similarity.h"
#include "decl/div.h"
#include "decl/empty.h"
#include "decl/eq.h"
#include "decl/expand.h"
#include "decl/linalg_vector_norm.h"
#include "decl/mul.h"
#include "decl/multi_margin_loss.h"
#include "decl/multi_margin_loss_backward.h"
#include "decl/multilabel_margin_loss.h"
#include "decl/multilabel_margin_loss_backward.h"
#include "decl/ne.h"
#include "decl/pairwise_distance.h"
#include "decl/pow.h"
#include "decl/reshape.h"
#include "decl/sqrt.h"
#include "decl/square.h"
#include "decl/sub.h"
#include "decl/sum.h"
#include "decl/where.h"

namespace oneflow {

namespace {
Tensor Num(double v) { return WrappedNumber(Scalar(v)); }
}  // namespace

// ||x1 - x2 + eps||_p over the last dim of the broadcast operands (p = 0 counts non-zeros).
Tensor PairwiseDistance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  OpScope scope("pairwise_distance");
  Tensor d = Add(Sub(x1, x2, Scalar(1)), Num(eps), Scalar(1));
  if (IsComplex(d.dtype())) d = Abs(d);  // every norm below depends on |d| only
  else if (!IsFloating(d.dtype())) d = CastTo(d, DefaultFloatDType());
  const bool scalar = d.dim() == 0;
  if (scalar) d = Reshape(d, DimVector{1});
  const DimVector last{-1};
  const bool kd = keepdim && !scalar;
  Tensor r;
  if (p == 0) {
    r = CastTo(Sum(Ne(d, Num(0)), last, kd, std::nullopt), d.dtype());
  } else if (p == 1) {
    r = Sum(Abs(d), last, kd, std::nullopt);
  } else if (p == 2) {
    r = Sqrt(Sum(Square(d), last, kd, std::nullopt));
  } else if (std::isinf(p)) {
    r = p > 0 ? Amax(Abs(d), last, kd) : Amin(Abs(d), last, kd);
  } else {
    r = Pow(Sum(Pow(Abs(d), Num(p)), last, kd, std::nullopt), Num(1.0 / p));
  }
  return scalar ? Reshape(r, DimVector{}) : r;
}

// sum over dim of (x1 / max(||x1||, eps)) (x2 / max(||x2||, eps)), on the broadcast operands.
Tensor CosineSimilarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  OpScope scope("cosine_similarity");
  OF_CHECK(eps >= 0) << "eps must be non-negative, got: " << eps;  // PyTorch's check (a negative eps is no clamp)
  const DType dt = ResultType({&x1, &x2});
  OF_CHECK(IsFloating(dt)) << "expected common dtype to be floating point, yet common dtype is oneflow."
                           << DTypeName(dt);
  const DimVector shape = BroadcastShapes(x1.sizes(), x2.sizes());
  const int d = WrapDim(dim, std::max<int>(1, shape.size()));
  Tensor a = Expand(CastTo(x1, dt), shape), b = Expand(CastTo(x2, dt), shape);
  if (shape.empty()) {
    a = Reshape(a, DimVector{1});
    b = Reshape(b, DimVector{1});
  }
  const DimVector dims{d};
  // The norms in one pass each (as PyTorch: linalg.vector_norm, clamped), then the normalised product.
  Tensor na = ClampMin(LinalgVectorNorm(a, Scalar(2.0), dims, true, std::nullopt), WrappedNumber(Scalar(eps)));
  Tensor nb = ClampMin(LinalgVectorNorm(b, Scalar(2.0), dims, true, std::nullopt), WrappedNumber(Scalar(eps)));
  Tensor r = Sum(Mul(Div(a, na, std::nullopt), Div(b, nb, std::nullopt)), dims, false, std::nullopt);
  return shape.empty() ? Reshape(r, DimVector{}) : r;
}

Tensor LabelColumnMask(const Tensor& label, const DimVector& x_sizes) {
  if (label.device().type != DeviceType::kCPU) {
    // On the device: column ids == each row's label (a label outside [0, C) matches none). (Also
    // lazy meta tensors, which have no values to read: Note [Backward nodes].)
    const int64_t rows = x_sizes.empty() ? 1 : x_sizes[0];
    const int64_t cols = rows == 0 ? 0 : NumelOf(x_sizes) / rows;
    const Tensor ids = Arange(Scalar(int64_t(0)), Scalar(cols), Scalar(int64_t(1)), DType::kInt64, label.device(), false);
    const Tensor l = Reshape(CastTo(label, DType::kInt64), DimVector{rows, 1});
    return Reshape(Eq(l, Reshape(ids, DimVector{1, cols})), x_sizes);
  }
  Tensor mask = Empty(x_sizes, DType::kBool);
  FillWith(mask, Scalar(false));
  const int64_t rows = x_sizes.empty() ? 1 : x_sizes[0];
  const int64_t cols = rows == 0 ? 0 : NumelOf(x_sizes) / rows;
  Tensor l = Contiguous(CastTo(label, DType::kInt64));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t y = l.data<int64_t>()[r];
    if (y >= 0 && y < cols) mask.data<bool>()[r * cols + y] = true;
  }
  return mask;
}

// InsightFace's combined margin: x at each row's label column becomes cos(m1 acos(x) + m2) - m3;
// rows whose label is outside [0, C) stay as they are (OneFlow: class-sharded logits).
Tensor CombinedMarginLoss(const Tensor& x, const Tensor& label, double m1, double m2, double m3) {
  OpScope scope("combined_margin_loss");
  CheckFloatingLossInput(x, "x");
  OF_CHECK(x.dim() >= 1) << "expected x of at least 1 dimension";
  CheckClassIndexTarget(label);
  OF_CHECK(label.numel() == x.sizes()[0])
      << "expected one label per row: x has " << x.sizes()[0] << " rows, label has " << label.numel()
      << " elements";
  Tensor out = Empty(x.sizes(), x.dtype(), x.device());
  if (x.device().type == DeviceType::kMeta) return out;
  CheckHasData(label);
  Tensor mask = LabelColumnMask(label, x.sizes());
  if (x.device().type == DeviceType::kCUDA) {  // device ops (the CPU loop computes in OpMath)
    const Tensor v = Sub(Cos(Add(Mul(Acos(x), Num(m1)), Num(m2), Scalar(1))), Num(m3), Scalar(1));
    CopyInto(out, Where(mask, v, x));
    return out;
  }
  CopyInto(out, x);
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    T* o = out.data<T>();
    const bool* m = mask.data<bool>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      if (!m[i]) continue;
      const M theta = std::acos(static_cast<M>(o[i]));
      o[i] = static_cast<T>(std::cos(theta * static_cast<M>(m1) + static_cast<M>(m2)) - static_cast<M>(m3));
    }
  });
  return out;
}

// ---- multi_margin_loss: sum_{i != y} max(0, w_y (margin - x_y + x_i))^p / C per row ----

namespace {

struct MarginRows {
  int64_t rows, classes;
  Tensor x, t;  // contiguous float64 input, int64 targets
  Tensor wt;    // the class weights as a float64 tensor (undefined: all 1)
};

MarginRows PrepareMultiMargin(const Tensor& input, const Tensor& target, int64_t p, const Tensor& weight) {
  OF_CHECK_VALUE(p == 1 || p == 2) << "only p == 1 and p == 2 supported";
  CheckFloatingLossInput(input, "input");
  CheckClassIndexTarget(target);
  OF_CHECK(input.dim() <= 2 && (input.dim() == 0 || input.numel() > 0 || input.dim() == 2))
      << "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
      << ShapeStr(input.sizes());
  MarginRows m;
  m.rows = input.dim() == 2 ? input.sizes()[0] : 1;
  m.classes = input.dim() == 0 ? 1 : input.sizes()[input.dim() - 1];
  OF_CHECK(target.numel() == m.rows && target.dim() <= 1)
      << "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
         "(batch size). Expected target size [" << m.rows << "], but got " << ShapeStr(target.sizes())
      << ". Input has shape " << ShapeStr(input.sizes()) << ".";
  if (weight.defined()) {
    OF_CHECK(weight.dim() == 1 && weight.numel() == m.classes)
        << "inconsistent weight size, expected " << m.classes << " but got " << ShapeStr(weight.sizes());
    CheckNoGradFor(weight, "weight");
  }
  return m;
}

void LoadMultiMargin(MarginRows& m, const Tensor& input, const Tensor& target, const Tensor& weight) {
  CheckHasData(target);
  m.t = Contiguous(CastTo(target, DType::kInt64));
  const Tensor th = OnHost(m.t);  // CUDA targets are range-checked in a host copy
  for (int64_t i = 0; i < m.rows; ++i) {
    const int64_t y = th.data<int64_t>()[i];
    OF_CHECK(y >= 0 && y < m.classes) << "target out of range";
  }
  // The row kernels read x and the weights on the input's device.
  m.x = Contiguous(CastTo(input, DType::kFloat64));
  if (weight.defined()) m.wt = Contiguous(CastTo(weight, DType::kFloat64));
}

DimVector RowOutputSizes(const Tensor& input, Reduction r) {
  if (r != Reduction::kNone || input.dim() < 2) return DimVector{};
  return DimVector{input.sizes()[0]};
}

// The reduction of per-row losses (float64 [rows], on the input's device), cast to the input's dtype.
Tensor ReduceRows(const Tensor& loss, Reduction r, const Tensor& input) {
  if (r == Reduction::kNone) return CastTo(Reshape(loss, RowOutputSizes(input, r)), input.dtype());
  Tensor total = Sum(loss, DimVector{0}, false, std::nullopt);
  if (r == Reduction::kMean) total = Div(total, Num(static_cast<double>(loss.numel())), std::nullopt);
  return CastTo(total, input.dtype());
}

// The incoming gradient per row (divided by the row count for 'mean'), float64 [rows].
Tensor RowScales(const Tensor& grad_output, int64_t rows, Reduction r) {
  const Tensor g = CastTo(grad_output, DType::kFloat64);
  Tensor s = Contiguous(Expand(Reshape(g, DimVector{r == Reduction::kNone && g.numel() == rows ? rows : 1}),
                               DimVector{rows}));
  if (r == Reduction::kMean) s = Div(s, Num(static_cast<double>(rows)), std::nullopt);
  return s;
}

}  // namespace

Tensor MultiMarginLoss(const Tensor& input, const Tensor& target, int64_t p, double margin, const Tensor& weight,
                       const std::string& reduction) {
  OpScope scope("multi_margin_loss");
  const Reduction r = ParseReduction(reduction);
  MarginRows m = PrepareMultiMargin(input, target, p, weight);
  if (input.device().type == DeviceType::kMeta) return Empty(RowOutputSizes(input, r), input.dtype(), input.device());
  LoadMultiMargin(m, input, target, weight);
  const Tensor loss = Empty(DimVector{m.rows}, DType::kFloat64, input.device());
  MultiMarginRows(m.x, m.t, m.wt, p, margin, loss);
  return ReduceRows(loss, r, input);
}

Tensor MultiMarginLossBackward(const Tensor& grad_output, const Tensor& input, const Tensor& target, int64_t p,
                               double margin, const Tensor& weight, const std::string& reduction) {
  OpScope scope("multi_margin_loss_backward");
  const Reduction r = ParseReduction(reduction);
  MarginRows m = PrepareMultiMargin(input, target, p, weight);
  if (input.device().type == DeviceType::kMeta) return Empty(input.sizes(), input.dtype(), input.device());
  LoadMultiMargin(m, input, target, weight);
  const Tensor gx = Empty(DimVector{m.rows, m.classes}, DType::kFloat64, input.device());
  MultiMarginGrad(m.x, m.t, m.wt, RowScales(grad_output, m.rows, r), p, margin, gx);
  return CastTo(Reshape(gx, input.sizes()), input.dtype());
}

// ---- multilabel_margin_loss: targets are the leading non-negative entries of each row, up to
// the first -1; sum over target j and non-target i of max(0, 1 - (x_j - x_i)) / C ----

namespace {

struct LabelRows {
  int64_t rows, classes;
  Tensor x, t;
};

LabelRows PrepareMultilabel(const Tensor& input, const Tensor& target) {
  CheckFloatingLossInput(input, "input");
  CheckClassIndexTarget(target);
  OF_CHECK(input.dim() <= 2) << "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                             << ShapeStr(input.sizes());
  OF_CHECK(target.sizes() == input.sizes()) << "inconsistent target size: " << ShapeStr(target.sizes())
                                            << " for input of size: " << ShapeStr(input.sizes());
  LabelRows m;
  m.rows = input.dim() == 2 ? input.sizes()[0] : 1;
  m.classes = input.dim() == 0 ? 1 : input.sizes()[input.dim() - 1];
  return m;
}

void LoadMultilabel(LabelRows& m, const Tensor& input, const Tensor& target) {
  CheckHasData(target);
  m.t = Contiguous(CastTo(target, DType::kInt64));
  const Tensor th = OnHost(m.t);  // CUDA targets are range-checked in a host copy
  for (int64_t i = 0; i < th.numel(); ++i) {
    const int64_t y = th.data<int64_t>()[i];
    OF_CHECK(y >= -1 && y < m.classes) << "argument #2 'target' is out of range";
  }
  m.x = Contiguous(CastTo(input, DType::kFloat64));
}

}  // namespace

Tensor MultilabelMarginLoss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  OpScope scope("multilabel_margin_loss");
  const Reduction r = ParseReduction(reduction);
  LabelRows m = PrepareMultilabel(input, target);
  if (input.device().type == DeviceType::kMeta) return Empty(RowOutputSizes(input, r), input.dtype(), input.device());
  LoadMultilabel(m, input, target);
  const Tensor loss = Empty(DimVector{m.rows}, DType::kFloat64, input.device());
  const Tensor mark = Empty(DimVector{m.rows, m.classes}, DType::kUInt8, input.device());
  MultilabelMarginRows(m.x, m.t, mark, loss);
  return ReduceRows(loss, r, input);
}

Tensor MultilabelMarginLossBackward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                                    const std::string& reduction) {
  OpScope scope("multilabel_margin_loss_backward");
  const Reduction r = ParseReduction(reduction);
  LabelRows m = PrepareMultilabel(input, target);
  if (input.device().type == DeviceType::kMeta) return Empty(input.sizes(), input.dtype(), input.device());
  LoadMultilabel(m, input, target);
  const Tensor gx = Empty(DimVector{m.rows, m.classes}, DType::kFloat64, input.device());
  const Tensor mark = Empty(DimVector{m.rows, m.classes}, DType::kUInt8, input.device());
  MultilabelMarginGrad(m.x, m.t, mark, RowScales(grad_output, m.rows, r), gx);
  return CastTo(Reshape(gx, input.sizes()), input.dtype());
}

}  // namespace oneflow
