#include "autograd/formulas/special.h"

#include <vector>

#include "autograd/formulas.h"
#include "decl/abs.h"
#include "decl/bessel_j0.h"
#include "decl/cast.h"
#include "decl/cos.h"
#include "decl/digamma.h"
#include "decl/exp.h"
#include "decl/gt.h"
#include "decl/i0.h"
#include "decl/i0e.h"
#include "decl/i1.h"
#include "decl/i1e.h"
#include "decl/le.h"
#include "decl/log_ndtr.h"
#include "decl/logical_not.h"
#include "decl/lt.h"
#include "decl/reciprocal.h"
#include "decl/sgn.h"
#include "decl/square.h"
#include "decl/where.h"

namespace oneflow::functional {

Tensor DerivativeNotImplemented(const char* op, const char* input) {
  OF_THROW(kNotImplemented) << "the derivative for '" << op << "' with respect to its " << input
                            << " is not implemented";
}

Tensor MvlgammaGrad(const Tensor& grad, const Tensor& x, int64_t p) {
  Tensor sum = functional::Digamma(x);
  for (int64_t i = 1; i < p; ++i) sum = sum + functional::Digamma(x - 0.5 * static_cast<double>(i));
  return grad * sum;
}

Tensor LogNdtrGrad(const Tensor& grad, const Tensor& x, const Tensor& result) {
  const bool low = x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16;
  Tensor xf = low ? functional::Cast(x, DType::kFloat32) : x;
  Tensor r = low ? functional::LogNdtr(xf) : result;
  Tensor d = functional::Exp(functional::Square(xf) * -0.5 - r) * 0.39894228040143267794;
  return grad * (low ? functional::Cast(d, x.dtype()) : d);
}

namespace {

// grad * (a(x) - result / x), with `limit` where |x| <= eps (result / x is 0/0 there); x is made
// safe first, so the discarded branch has no NaN gradient either.
template <typename A>
Tensor MinusQuotientGrad(const Tensor& grad, const Tensor& x, const Tensor& result, double limit, const A& a) {
  const double eps = x.dtype() == DType::kFloat64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
  Tensor tiny = functional::Le(functional::Abs(x), S(eps));  // (NaN: the quotient branch, NaN)
  Tensor safe_x = functional::Where(tiny, S(eps), x);
  Tensor d = functional::Where(tiny, S(limit), a(safe_x) - result / safe_x);
  return grad * d;
}

}  // namespace

Tensor BesselJ1Grad(const Tensor& grad, const Tensor& x, const Tensor& result) {
  return MinusQuotientGrad(grad, x, result, 0.5, [](const Tensor& t) { return functional::BesselJ0(t); });
}

Tensor SphericalBesselJ0Grad(const Tensor& grad, const Tensor& x, const Tensor& result) {
  // (cos x - sin(x)/x) / x cancels to -x/3 near 0: there (|x| < 1/2) its Maclaurin series
  // sum_k (-1)^k 2k x^(2k-1) / (2k+1)!, 8 terms (the 9th is below 1e-17 relative).
  Tensor small = functional::Lt(functional::Abs(x), S(0.5));
  Tensor safe_x = functional::Where(small, S(1.0), x);
  Tensor x2 = x * x;
  double fact = 6.0;  // (2k+1)! for k = 1
  std::vector<double> c;
  for (int k = 1; k <= 8; ++k) {
    c.push_back((k % 2 ? -2.0 : 2.0) * k / fact);
    fact *= (2 * k + 2) * (2 * k + 3);
  }
  Tensor poly = x2 * c[7] + c[6];
  for (int k = 5; k >= 0; --k) poly = poly * x2 + c[k];
  Tensor far = (functional::Cos(safe_x) - result) / safe_x;
  return grad * functional::Where(small, poly * x, far);
}

Tensor BesselI1Grad(const Tensor& grad, const Tensor& x, const Tensor& result, bool scaled) {
  // 16-bit inputs: evaluated in float32 (the result recomputed there), rounded once, so that
  // large arguments give the overflowing derivative instead of inf - inf.
  const bool low = x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16;
  Tensor xf = low ? functional::Cast(x, DType::kFloat32) : x;
  Tensor r = !low ? result : scaled ? functional::I1e(xf) : functional::I1(xf);
  // Near 0 the quotient result / x is 0/0; the limit of the derivative there is 1/2. The
  // denominator is made safe first so that the discarded branch has no NaN gradient either.
  // ("not > eps" rather than "<= eps": NaN inputs take the 1/2 branch, as in PyTorch.)
  const double eps = xf.dtype() == DType::kFloat64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
  Tensor tiny = functional::LogicalNot(functional::Gt(functional::Abs(xf), S(eps)));
  Tensor safe_x = functional::Where(tiny, S(eps), xf);
  Tensor d = scaled ? functional::I0e(safe_x) - r * (functional::Sgn(safe_x) + functional::Reciprocal(safe_x))
                    : functional::I0(safe_x) - r / safe_x;
  d = functional::Where(tiny, S(0.5), d);
  return grad * (low ? functional::Cast(d, x.dtype()) : d);
}

}  // namespace oneflow::functional
