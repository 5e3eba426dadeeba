// Hand-written entries of the activation family (src/ops/table/activation.yaml): gelu (two
// functors behind a string attribute), prelu (a weight broadcast along the channel dim), and the
// kernel entries of the composite rrelu/glu (src/autograd/composite/activation.cpp).
#include <cmath>

#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "kernels/functors/activation.h"
#include "ops/pointwise.h"
#include "decl/gelu.h"
#include "decl/gelu_backward.h"
#include "decl/glu.h"
#include "decl/prelu.h"
#include "decl/rrelu.h"

namespace oneflow {

// `check:` functions of the pointwise activations (declared by the generator).
void CheckHardtanh(const Tensor&, double min_val, double max_val) {
  OF_CHECK_VALUE(min_val <= max_val) << "min_val cannot be greater than max_val";
}
void CheckCelu(const Tensor&, double alpha) {
  OF_CHECK(alpha != 0) << "ZeroDivisionError: alpha cannot be 0 for CELU";
}
void CheckSoftshrink(const Tensor&, double lambd) {
  OF_CHECK(lambd >= 0) << "lambda must be greater or equal to 0, but found to be " << lambd << ". [OneFlow: alpha must "
                       << "be greater or equal to 0, but found to be " << lambd << ".]";  // Note [Upstream's words] (src/autograd/meta.cpp)
  // PyTorch bounds lambda by the input dtype's largest value; an infinite one is past them all
  // (it made every output 0).
  OF_CHECK(std::isfinite(lambd)) << "lambda must be finite (at most the input dtype's largest value), but found " << lambd;
}
// softsign / tanhshrink promote integers to float as PyTorch does, but PyTorch refuses a bool
// input (its abs / subtraction have no bool form) where promoting would compute silently.
void CheckActivationNotBool(const Tensor& input) {
  OF_CHECK(input.dtype() != DType::kBool) << "not implemented for 'Bool' tensors";
}

namespace {
bool GeluIsTanh(const std::string& approximate) {
  OF_CHECK(approximate == "none" || approximate == "tanh")
      << "approximate argument must be either none or tanh.";
  return approximate == "tanh";
}
}  // namespace

// Floating inputs only (kSame over kFloat): upstream OneFlow registers gelu's kernel for floating
// dtypes only (its output dtype is the input's), and PyTorch has no integer kernel either.
Tensor Gelu(const Tensor& input, const std::string& approximate) {
  OpScope scope("gelu");
  if (GeluIsTanh(approximate)) {
    return UnaryOp<GeluTanhFunctor, ResultKind::kSame, DTypeSet::kFloat>(input);
  }
  return UnaryOp<GeluFunctor, ResultKind::kSame, DTypeSet::kFloat>(input);
}

Tensor GeluBackward(const Tensor& grad_output, const Tensor& input, const std::string& approximate) {
  OpScope scope("gelu_backward");
  if (GeluIsTanh(approximate)) {
    return BinaryOp<GeluTanhBackwardFunctor, ResultKind::kFloat, DTypeSet::kFloat>(grad_output, input);
  }
  return BinaryOp<GeluBackwardFunctor, ResultKind::kFloat, DTypeSet::kFloat>(grad_output, input);
}

// prelu(x, w) = x > 0 ? x : w * x, w being one value or one per channel (dim 1; no channel dim
// below 2-d inputs). The weight is viewed as [C, 1, ..., 1] and broadcast by the engine.
Tensor Prelu(const Tensor& input, const Tensor& weight) {
  OpScope scope("prelu");
  OF_CHECK(weight.dim() <= 1) << "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
                              << weight.dim();
  const int64_t channels = input.dim() >= 2 ? input.sizes()[1] : 1;
  OF_CHECK(weight.numel() == 1 || weight.numel() == channels)
      << "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
      << weight.numel() << " and channel size = " << channels << ". [OneFlow: num_parameters in prelu must be 1 or "
      << channels << "]";  // Note [Upstream's words] (src/autograd/meta.cpp)
  OF_CHECK(input.dtype() == weight.dtype())
      << "prelu: Type promoting not supported. Got " << DTypeName(input.dtype()) << " and "
      << DTypeName(weight.dtype());
  Tensor w;
  if (weight.numel() == 1) {
    w = MakeView(weight, DimVector{}, DimVector{}, weight.offset());
  } else {
    DimVector s(input.dim() - 1, 1), st(input.dim() - 1, 0);
    s[0] = channels;
    st[0] = weight.strides()[0];
    w = MakeView(weight, s, st, weight.offset());
  }
  return BinaryOp<PreluFunctor, ResultKind::kSame, DTypeSet::kFloat>(input, w);
}

// Kernel entries of the composite ops: the differentiable entries compose table ops; these run
// them without recording (e.g. for callers below autograd).
Tensor Rrelu(const Tensor& input, double lower, double upper, bool training) {
  AutoGradMode no_grad(false);
  return functional::Rrelu(input, lower, upper, training);
}

Tensor& Rrelu_(Tensor& input, double lower, double upper, bool training) {
  AutoGradMode no_grad(false);
  return functional::Rrelu_(input, lower, upper, training);
}

Tensor Glu(const Tensor& input, int64_t dim) {
  AutoGradMode no_grad(false);
  return functional::Glu(input, dim);
}

}  // namespace oneflow
