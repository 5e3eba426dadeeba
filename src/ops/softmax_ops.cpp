// Softmax family: softmax, log_softmax, softmin and their backward ops, as fused kernels
// (kernels/softmax.h). The input is viewed as [outer, n, inner] with n the softmax dim.
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/softmax.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/log_softmax.h"
#include "decl/log_softmax_backward.h"
#include "decl/mode.h"
#include "decl/neg.h"
#include "decl/softmax.h"
#include "decl/softmax_backward.h"
#include "decl/softmin.h"

namespace oneflow {

int64_t SoftmaxDim(std::optional<int64_t> dim, int ndim) {
  // PyTorch's legacy implicit choice (nn.functional._get_softmax_dim) when dim is None.
  if (!dim) return (ndim == 0 || ndim == 1 || ndim == 3) ? 0 : 1;
  return WrapDim(*dim, ndim);
}

namespace {

using Mode = SoftmaxMode;

struct Geom {
  int64_t outer = 1, n = 1, inner = 1;
};

Geom GeomOf(const DimVector& sizes, int64_t d) {
  Geom g;
  for (int i = 0; i < sizes.size(); ++i) {
    if (i < d) g.outer *= sizes[i];
    else if (i == d) g.n = sizes[i];
    else g.inner *= sizes[i];
  }
  return g;
}

const char* ModeName(Mode m) {
  return m == Mode::kSoftmax ? "softmax" : m == Mode::kLogSoftmax ? "log_softmax" : "softmin";
}

Tensor Forward(const Tensor& input, std::optional<int64_t> dim, std::optional<DType> dtype, Mode mode) {
  // softmin is softmax(-input), and negating a bool tensor is refused (as in PyTorch).
  OF_CHECK(!(mode == Mode::kSoftmin && input.dtype() == DType::kBool))
      << "Negation, the `-` operator, on a bool tensor is not supported.";
  const int64_t d = SoftmaxDim(dim, input.dim());
  const DType dt = dtype ? *dtype : input.dtype();
  Tensor out = Empty(input.sizes(), dt, input.device());
  // An empty input has nothing to compute, whatever its dtype (PyTorch returns it too).
  if (out.numel() == 0) return out;
  OF_CHECK(IsFloating(dt)) << ModeName(mode) << " expects a floating point input (or dtype=), got "
                           << DTypeName(dt);
  if (out.device().type == DeviceType::kMeta) return out;
  // softmin of integers negates in the integer dtype first (uint8 wraps), as PyTorch's
  // softmax(-input) does; floats negate inside the kernel.
  const bool neg_first = mode == Mode::kSoftmin && !IsFloating(input.dtype());
  const Tensor x = Contiguous(CastTo(neg_first ? Neg(input) : input, dt));
  if (neg_first) mode = Mode::kSoftmax;
  const Geom g = GeomOf(input.sizes(), d);
  SoftmaxRows(x, out, g.outer, g.n, g.inner, mode);
  return out;
}

Tensor Backward(const Tensor& grad_output, const Tensor& output, int64_t dim, bool log) {
  OF_CHECK(grad_output.sizes() == output.sizes())
      << "grad_output and output must have the same shape, got " << ShapeStr(grad_output.sizes())
      << " and " << ShapeStr(output.sizes());
  CheckSameDevice(grad_output, output);
  const DType dt = PromoteTypes(grad_output.dtype(), output.dtype());
  OF_CHECK(IsFloating(dt)) << "expected floating point tensors, got " << DTypeName(dt);
  const int64_t d = WrapDim(dim, output.dim());
  Tensor out = Empty(output.sizes(), dt, output.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const Tensor g = Contiguous(CastTo(grad_output, dt)), y = Contiguous(CastTo(output, dt));
  const Geom geo = GeomOf(output.sizes(), d);
  SoftmaxRowsBackward(g, y, out, geo.outer, geo.n, geo.inner, log);
  return out;
}

}  // namespace

Tensor Softmax(const Tensor& input, std::optional<int64_t> dim, std::optional<DType> dtype) {
  OpScope scope("softmax");
  return Forward(input, dim, dtype, Mode::kSoftmax);
}

Tensor LogSoftmax(const Tensor& input, std::optional<int64_t> dim, std::optional<DType> dtype) {
  OpScope scope("log_softmax");
  return Forward(input, dim, dtype, Mode::kLogSoftmax);
}

Tensor Softmin(const Tensor& input, std::optional<int64_t> dim, std::optional<DType> dtype) {
  OpScope scope("softmin");
  return Forward(input, dim, dtype, Mode::kSoftmin);
}

Tensor SoftmaxBackward(const Tensor& grad_output, const Tensor& output, int64_t dim) {
  OpScope scope("softmax_backward");
  return Backward(grad_output, output, dim, false);
}

Tensor LogSoftmaxBackward(const Tensor& grad_output, const Tensor& output, int64_t dim) {
  OpScope scope("log_softmax_backward");
  return Backward(grad_output, output, dim, true);
}

}  // namespace oneflow
