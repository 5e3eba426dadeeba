#include "autograd/formulas/shape.h"

#include "autograd/formulas.h"
#include "ops/manual_ops.h"
#include "decl/add.h"
#include "decl/amax.h"
#include "decl/arange.h"
#include "decl/as_strided.h"
#include "decl/contiguous.h"
#include "decl/diagonal.h"
#include "decl/expand.h"
#include "decl/full.h"
#include "decl/index_put.h"
#include "decl/mul.h"
#include "decl/reshape.h"
#include "decl/roll.h"
#include "decl/select.h"
#include "decl/sum.h"
#include "decl/zeros.h"

namespace oneflow::functional {

namespace {
Tensor ZerosOf(const DimVector& sizes, const Tensor& like) {
  return functional::Zeros(sizes, like.dtype(), like.device(), false);
}
}  // namespace

Tensor DiagonalGrad(const Tensor& grad, const DimVector& sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor buf = ZerosOf(sizes, grad);
  CopyFrom_(functional::Diagonal(buf, offset, dim1, dim2), grad);
  return buf;
}

Tensor SelectGrad(const Tensor& grad, const DimVector& sizes, int64_t dim, int64_t index) {
  Tensor buf = ZerosOf(sizes, grad);
  CopyFrom_(functional::Select(buf, dim, index), grad);
  return buf;
}

Tensor UnfoldGrad(const Tensor& grad, const DimVector& sizes, int64_t dim, int64_t size, int64_t step) {
  if (sizes.empty()) return functional::Reshape(functional::Sum(grad, std::nullopt, false, std::nullopt), sizes);
  const int d = WrapDim(dim, sizes.size());
  Tensor buf = ZerosOf(sizes, grad);
  const int64_t count = grad.sizes()[d];
  // Element j of every window sits at positions j, j + step, ...: one strided slice per j, so
  // each write is free of overlap even when the windows overlap.
  // (buf is contiguous: the slice j::step along d is this strided view)
  DimVector at_sizes = sizes, at_strides(sizes.size(), 1);
  for (int k = static_cast<int>(sizes.size()) - 2; k >= 0; --k) at_strides[k] = at_strides[k + 1] * sizes[k + 1];
  at_sizes[d] = count;
  const int64_t along = at_strides[d];
  at_strides[d] *= step;
  for (int64_t j = 0; j < size && count > 0; ++j) {
    Tensor dst = functional::AsStrided(buf, at_sizes, at_strides, j * along);
    Tensor g = functional::Select(grad, -1, j);
    if (step >= size) {
      CopyFrom_(dst, g);
    } else {
      functional::Add_(dst, g, Scalar(1));
    }
  }
  return buf;
}

namespace {
// Storage positions (relative to `base`) of every element of the geometry, as an int64 tensor
// of shape `size`.
Tensor Positions(const DimVector& size, const DimVector& stride, int64_t offset, const Device& dev) {
  Tensor pos = ::oneflow::Full(DimVector{}, Scalar(offset), DType::kInt64, dev, false);
  for (int i = 0; i < size.size(); ++i) {
    DimVector shape(size.size(), 1);
    shape[i] = size[i];
    Tensor r = ::oneflow::Arange(Scalar(int64_t(0)), Scalar(size[i]), Scalar(int64_t(1)), DType::kInt64, dev, false);
    r = ::oneflow::Mul(r, WrappedNumber(Scalar(stride[i])));
    pos = ::oneflow::Add(pos, ::oneflow::Reshape(r, shape), Scalar(1));
  }
  return ::oneflow::Contiguous(::oneflow::Expand(pos, size));
}
}  // namespace

Tensor AsStridedGrad(const Tensor& grad, const Tensor& input, const DimVector& size, const DimVector& stride,
                     const std::optional<int64_t>& storage_offset) {
  const int64_t out_off = storage_offset.value_or(input.offset());
  Tensor out_pos = Positions(size, stride, out_off, grad.device());
  Tensor in_pos = Positions(input.sizes(), input.strides(), input.offset(), grad.device());
  // A flat buffer over every storage position either geometry touches.
  int64_t extent = 1;
  for (const Tensor* p : {&out_pos, &in_pos})
    if (p->numel() > 0) extent = std::max(extent, ItemOf(::oneflow::Amax(*p, std::nullopt, false)).ToInt() + 1);
  Tensor buf = ZerosOf(DimVector{extent}, grad);
  functional::IndexPut_(buf, {::oneflow::Reshape(out_pos, DimVector{-1})}, functional::Reshape(grad, DimVector{-1}), true);
  std::vector<Tensor> idx = {::oneflow::Reshape(in_pos, DimVector{-1})};
  Tensor g = functional::Reshape(functional::IndexGather(buf, idx), input.sizes());
  // Positions the input reaches k times (an expanded input) each receive 1/k of the sum.
  Tensor count = ::oneflow::Zeros(DimVector{extent}, ToRealDType(grad.dtype()), grad.device(), false);  // (real: Amax)
  ::oneflow::IndexPut(count, idx, WrappedNumber(Scalar(1.0)), true);
  Tensor c = ::oneflow::Reshape(::oneflow::IndexGather(count, idx), input.sizes());
  if (ItemOf(::oneflow::Amax(c, std::nullopt, false)).ToDouble() > 1.0) g = g / c;
  return g;
}

Tensor RollGrad(const Tensor& grad, const DimVector& shifts, const std::optional<DimVector>& dims) {
  DimVector neg = shifts;
  for (int64_t& s : neg) s = -s;
  return functional::Roll(grad, neg, dims);
}

}  // namespace oneflow::functional
