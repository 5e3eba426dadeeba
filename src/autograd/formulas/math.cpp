#include "autograd/formulas/math.h"

#include <limits>

#include "autograd/formulas.h"
#include "autograd/formulas/complex.h"
#include "decl/cast.h"
#include "decl/complex.h"
#include "decl/cos.h"
#include "decl/eq.h"
#include "decl/ge.h"
#include "decl/gt.h"
#include "decl/imag.h"
#include "decl/isfinite.h"
#include "decl/le.h"
#include "decl/logical_and.h"
#include "decl/logical_or.h"
#include "decl/lt.h"
#include "decl/ne.h"
#include "decl/real.h"
#include "decl/sin.h"
#include "decl/where.h"
#include "decl/xlog1py.h"
#include "decl/xlogy.h"

namespace oneflow::functional {

Tensor ClampGrad(const Tensor& grad, const Tensor& x, const Tensor& min, const Tensor& max) {
  Tensor keep;
  if (min.defined()) keep = functional::Ge(x, min);
  if (max.defined()) {
    Tensor m = functional::Le(x, max);
    keep = keep.defined() ? functional::LogicalAnd(keep, m) : m;
  }
  return keep.defined() ? Masked(grad, keep) : grad;
}

Tensor ClampBoundGrad(const Tensor& grad, const Tensor& x, const Tensor& min, const Tensor& max, bool for_min) {
  Tensor active;
  if (for_min) {
    active = functional::Lt(x, min);
    if (max.defined()) active = functional::LogicalAnd(active, functional::Lt(min, max));
  } else {
    active = functional::Gt(x, max);
    if (min.defined()) active = functional::LogicalOr(active, functional::Lt(max, min));
  }
  return Masked(grad, active);
}

Tensor DivGrad(const Tensor& grad, const Tensor& x, const Tensor& y,
               const std::optional<std::string>& rounding_mode, bool for_x) {
  if (rounding_mode) return ZerosFor(grad);
  if (IsComplex(grad.dtype())) {  // conjugate Wirtinger derivatives (formulas/complex.h)
    Tensor gy = grad / MaybeConj(y);
    return for_x ? gy : -(gy * MaybeConj(x / y));
  }
  return for_x ? grad / y : -(grad * x) / (y * y);
}

Tensor NanToNumGrad(const Tensor& grad, const Tensor& x) {
  if (!IsComplex(x.dtype())) return Masked(grad, functional::Isfinite(x));
  return functional::Complex(Masked(functional::Real(grad), functional::Isfinite(functional::Real(x))),
                             Masked(functional::Imag(grad), functional::Isfinite(functional::Imag(x))));
}

Tensor SincGrad(const Tensor& grad, const Tensor& x) {
  // d/dx sin(pi x)/(pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2); 0 at x = 0.
  // The numerator cancels near the roots of the derivative, and so does a complex product with
  // grad: 16-bit inputs are evaluated in float32 (complex64 in complex128) and the gradient
  // rounded once.
  constexpr double kPi = 3.14159265358979323846;
  const bool low = x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16 || x.dtype() == DType::kComplex64;
  const DType wide = x.dtype() == DType::kComplex64 ? DType::kComplex128 : DType::kFloat32;
  Tensor xf = low ? functional::Cast(x, wide) : x;
  Tensor px = xf * kPi;
  Tensor d = (px * functional::Cos(px) - functional::Sin(px)) / (xf * xf * kPi);
  Tensor g = Masked((low ? functional::Cast(grad, wide) : grad) * MaybeConj(d), functional::Ne(x, S(0)));
  return low ? functional::Cast(g, grad.dtype()) : g;
}

Tensor XlogyGrad(const Tensor& grad, const Tensor& x, const Tensor& y, bool log1p) {
  // xlogy(grad, y) rather than grad * log(y): a zero gradient stays 0 where log(y) is infinite.
  Tensor g = log1p ? functional::Xlog1py(grad, y) : functional::Xlogy(grad, y);
  Tensor at_pole = functional::LogicalAnd(functional::Eq(x, S(0)), functional::Le(y, S(log1p ? -1.0 : 0.0)));
  return functional::Where(at_pole, S(0), g);
}

Tensor LogitGrad(const Tensor& grad, const Tensor& x, const std::optional<double>& eps) {
  // 1 / (x (1 - x)); with eps, zero where the forward clamped x (outside [eps, 1 - eps]),
  // without it NaN outside [0, 1] (where logit itself is NaN), as PyTorch's logit_backward.
  Tensor g = grad / (x * (1.0 - x));
  const bool clamped = eps && *eps >= 0;
  const double lo = clamped ? *eps : 0.0;
  Tensor inside = functional::LogicalAnd(functional::Ge(x, S(lo)), functional::Le(x, S(1.0 - lo)));
  return functional::Where(inside, g, S(clamped ? 0.0 : std::numeric_limits<double>::quiet_NaN()));
}

Tensor FloatPowerOperand(const Tensor& t, const Tensor& other) {
  const bool complex = IsComplex(t.dtype()) || IsComplex(other.dtype());
  return functional::Cast(t, complex ? DType::kComplex128 : DType::kFloat64);
}

}  // namespace oneflow::functional
