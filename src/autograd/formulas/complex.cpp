#include "autograd/formulas/complex.h"

#include "autograd/formulas.h"
#include "decl/abs.h"
#include "decl/complex.h"
#include "decl/ne.h"
#include "decl/real.h"
#include "decl/zeros_like.h"

namespace oneflow::functional {

Tensor ImagGrad(const Tensor& grad) {
  Tensor g = IsComplex(grad.dtype()) ? functional::Real(grad) : grad;
  return functional::Complex(functional::ZerosLike(g, std::nullopt, std::nullopt, false), g);
}

Tensor AngleGrad(const Tensor& grad, const Tensor& z) {
  if (!IsComplex(z.dtype())) return ZerosFor(grad);
  Tensor a = functional::Abs(z);
  Tensor g = grad * z / (a * a) * WrappedNumber(Scalar(std::complex<double>(0.0, 1.0)));
  return Masked(g, functional::Ne(z, S(0)));
}

}  // namespace oneflow::functional
