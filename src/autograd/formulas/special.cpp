#include "autograd/formulas/special.h"

#include "autograd/formulas.h"

namespace oneflow::functional {

Tensor DerivativeNotImplemented(const char* op, const char* input) {
  OF_THROW(kRuntime) << "the derivative for '" << op << "' with respect to its " << input
                     << " is not implemented";
}

Tensor MvlgammaGrad(const Tensor& grad, const Tensor& x, int64_t p) {
  Tensor sum = functional::Digamma(x);
  for (int64_t i = 1; i < p; ++i) sum = sum + functional::Digamma(x - 0.5 * static_cast<double>(i));
  return grad * sum;
}

Tensor BesselI1Grad(const Tensor& grad, const Tensor& x, const Tensor& result, bool scaled) {
  // Near 0 the quotient result / x is 0/0; the limit of the derivative there is 1/2. The
  // denominator is made safe first so that the discarded branch has no NaN gradient either.
  const double eps = x.dtype() == DType::kFloat64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
  Tensor tiny = functional::Le(functional::Abs(x), S(eps));
  Tensor safe_x = functional::Where(tiny, S(eps), x);
  Tensor d = scaled ? functional::I0e(safe_x) - result * (functional::Sign(safe_x) + functional::Reciprocal(safe_x))
                    : functional::I0(safe_x) - result / safe_x;
  return grad * functional::Where(tiny, S(0.5), d);
}

}  // namespace oneflow::functional
