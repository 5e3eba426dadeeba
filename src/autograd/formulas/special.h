// Backward helpers of the special functions (src/ops/table/special.yaml).
#pragma once
#include "autograd/functional.h"

namespace oneflow::functional {

// Raises PyTorch's "the derivative for '<op>' is not implemented" when the gradient of one input
// is needed (the other inputs of the op stay differentiable).
Tensor DerivativeNotImplemented(const char* op, const char* input);
// d/dx sum_i lgamma(x - i/2) = sum_i digamma(x - i/2).
Tensor MvlgammaGrad(const Tensor& grad, const Tensor& x, int64_t p);
// i1' = i0 - i1/x and i1e' = i0e - i1e (sgn x + 1/x), both 1/2 at x = 0.
// grad * phi(x) / ndtr(x) = grad * exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi). For 16-bit inputs
// log_ndtr is recomputed in float32: the rounded result is too coarse inside the exponential.
Tensor LogNdtrGrad(const Tensor& grad, const Tensor& x, const Tensor& result);
Tensor BesselI1Grad(const Tensor& grad, const Tensor& x, const Tensor& result, bool scaled);
// j1' = j0 - j1/x (1/2 at x = 0) and d/dx sin(x)/x = (cos x - sin(x)/x) / x (0 at x = 0): the
// bessel family (src/ops/table/bessel.yaml).
Tensor BesselJ1Grad(const Tensor& grad, const Tensor& x, const Tensor& result);
Tensor SphericalBesselJ0Grad(const Tensor& grad, const Tensor& x, const Tensor& result);

}  // namespace oneflow::functional
