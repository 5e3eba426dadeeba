// Backward helpers of the complex family (src/ops/table/complex.yaml). PyTorch's convention:
// the gradient of a real loss L w.r.t. z is dL/d(conj z) (the conjugate Wirtinger derivative),
// so a holomorphic f contributes grad * conj(f'(z)).
#pragma once
#include "autograd/functional.h"
#include "decl/conj.h"

namespace oneflow::functional {

// conj(t) for complex t, t itself otherwise (formulas use it around every derivative factor).
inline Tensor MaybeConj(const Tensor& t) { return IsComplex(t.dtype()) ? functional::Conj(t) : t; }
// The gradient of imag(z): grad * 1j, as a complex tensor.
Tensor ImagGrad(const Tensor& grad);
// angle: i * grad * z / |z|^2 (0 at z = 0) for complex z; 0 for real input.
Tensor AngleGrad(const Tensor& grad, const Tensor& z);

}  // namespace oneflow::functional
