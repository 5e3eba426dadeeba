// Differentiable entries of the composite activations (`backward: manual` in
// src/ops/table/activation.yaml): their gradients come from the table ops they are made of.
#include "autograd/formulas.h"
#include "ops/random_kernels.h"
#include "decl/glu.h"
#include "decl/leaky_relu.h"
#include "decl/mul.h"
#include "decl/narrow.h"
#include "decl/rrelu.h"
#include "decl/sigmoid.h"

namespace oneflow::functional {

namespace {
void CheckRrelu(const Tensor& input, double lower, double upper) {
  OF_CHECK(lower <= upper) << "Lower bound should be less than or equal to the upper bound";
  OF_CHECK(IsFloating(input.dtype())) << "rrelu expects a floating point input, got "
                                      << DTypeName(input.dtype());
}
}  // namespace

// Training: x * slope with a random slope in [lower, upper) per negative element (the gradient is
// grad * slope, through Mul). Eval: leaky_relu with the mean slope.
Tensor Rrelu(const Tensor& input, double lower, double upper, bool training) {
  OpScope scope("rrelu");
  CheckRrelu(input, lower, upper);
  if (!training) return functional::LeakyRelu(input, (lower + upper) / 2);
  return functional::Mul(input, RreluNoise(input, lower, upper));
}

Tensor& Rrelu_(Tensor& input, double lower, double upper, bool training) {
  OpScope scope("rrelu_");
  CheckRrelu(input, lower, upper);
  if (!training) return functional::LeakyRelu_(input, (lower + upper) / 2);
  return functional::Mul_(input, RreluNoise(input, lower, upper));
}

// glu(x) = a * sigmoid(b), a and b the two halves of x along dim.
Tensor Glu(const Tensor& input, int64_t dim) {
  OpScope scope("glu");
  OF_CHECK(input.dim() > 0) << "glu does not support scalars because halving size must be even";
  OF_CHECK(IsFloating(input.dtype())) << "glu expects a floating point input, got "
                                      << DTypeName(input.dtype());
  const int d = WrapDim(dim, input.dim());
  const int64_t n = input.sizes()[d];
  OF_CHECK(n % 2 == 0) << "Halving dimension must be even, but dimension " << d << " is size " << n;
  Tensor a = functional::Narrow(input, d, 0, n / 2);
  Tensor b = functional::Narrow(input, d, n / 2, n / 2);
  return functional::Mul(a, functional::Sigmoid(b));
}

}  // namespace oneflow::functional
