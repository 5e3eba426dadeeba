// Gathers along a dim: gather, take_along_dim, take, index_select. The row kernels of gather and
// index_select are kernels/gather_scatter.h's (they report the first out-of-range index, raised
// here); take's host loop and the checks are this file's.
#include <type_traits>

#include "kernels/gather_scatter.h"
#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/gather.h"
#include "decl/index_select.h"
#include "decl/remainder.h"
#include "decl/reshape.h"
#include "decl/take.h"
#include "decl/take_along_dim.h"

namespace oneflow {

namespace {

void CheckGatherShapes(const Tensor& input, int dim, const Tensor& index, const char* op) {
  const int nd = std::max(input.dim(), 1);
  OF_CHECK(std::max(index.dim(), 1) == nd) << "Index tensor must have the same number of dimensions as input tensor";
  for (int d = 0; d < nd; ++d) {
    if (d == dim) continue;
    OF_CHECK(SizeAt(index, d) <= SizeAt(input, d))
        << "Size does not match at dimension " << d << " expected index " << ShapeStr(index.sizes())
        << " to be no larger than self " << ShapeStr(input.sizes()) << " apart from dimension " << dim;
  }
  (void)op;
}

// `t` expanded (a view, no copy) to `shape`.
Tensor ExpandView(const Tensor& t, const DimVector& shape) {
  if (t.sizes() == shape) return t;
  DimVector st(shape.size(), 0);
  const int off = shape.size() - t.dim();
  for (int d = 0; d < t.dim(); ++d) st[off + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
  return MakeView(t, shape, st, t.offset());
}

Tensor GatherImpl(const Tensor& input, int d, const Tensor& index) {
  CheckSameDevice(input, index);
  Tensor out = Empty(index.sizes(), input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  if (auto bad = GatherDim(out, input, d, Contiguous(index)))
    OF_THROW(kRuntime) << "index " << *bad << " is out of bounds for dimension " << d << " with size "
                       << SizeAt(input, d);
  return out;
}

}  // namespace

Tensor Gather(const Tensor& input, int64_t dim, const Tensor& index, bool sparse_grad) {
  OpScope scope("gather");
  (void)sparse_grad;  // the gradient is always dense here (a valid choice for any caller)
  const int d = WrapDim(dim, input.dim());
  OF_CHECK(IsIndexDType(index.dtype(), true)) << "Expected dtype int32/int64 for index";
  CheckGatherShapes(input, d, index, "gather");
  return GatherImpl(input, d, index);
}

Tensor TakeAlongDim(const Tensor& input, const Tensor& indices, std::optional<int64_t> dim) {
  OpScope scope("take_along_dim");
  OF_CHECK(IsIndexDType(indices.dtype(), false))
      << "dtype of indices should be int64 but got " << DTypeName(indices.dtype());
  if (!dim) {
    Tensor flat = Reshape(input, DimVector{-1});
    Tensor fi = Reshape(indices, DimVector{-1});
    return GatherImpl(flat, 0, fi);
  }
  const int d = WrapDim(*dim, input.dim());
  OF_CHECK(input.dim() == indices.dim())
      << "input and indices should have the same number of dimensions, but got "
      << input.dim() << " dimensions for input, and " << indices.dim() << " dimensions for indices";
  OF_CHECK_INDEX(input.dim() > 0) << "Dimension specified as " << *dim << " but tensor has no dimensions";
  // Both broadcast over every dim but `dim`, where each keeps its own size.
  DimVector s = input.sizes();
  s[d] = indices.sizes()[d];
  DimVector shape = BroadcastShapes(s, indices.sizes());
  CheckSameDevice(input, indices);
  Tensor out = Empty(shape, input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  // Negative indices count from the end (PyTorch accepts them here, unlike in gather).
  const int64_t size = input.sizes()[d];
  Tensor bi = Empty(shape, DType::kInt64, input.device());
  CopyInto(bi, ExpandView(indices, shape));
  if (auto bad = FindOutOfRange(bi, -size, size))
    OF_THROW(kIndex) << "index " << *bad << " is out of bounds for dimension " << d << " with size " << size;
  // Into [0, size): a floor remainder (a table op, any device) of values now in [-size, size).
  bi = Contiguous(Remainder(bi, ScalarToTensor(Scalar(size), DType::kInt64)));
  shape[d] = size;
  GatherDim(out, ExpandView(input, shape), d, bi);  // in range: checked above
  return out;
}

Tensor Take(const Tensor& input, const Tensor& index) {
  OpScope scope("take");
  OF_CHECK(index.dtype() == DType::kInt64)
      << "Expected a long tensor for index, but got " << DTypeName(index.dtype());
  CheckSameDevice(input, index);
  Tensor out = Empty(index.sizes(), input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const int64_t n = input.numel();
  OF_CHECK_INDEX(n > 0) << "cannot do a non-empty take from an empty axes.";
  // CUDA: the flattened input indexed by `index` (advanced indexing's kernels and range check).
  if (input.device().type == DeviceType::kCUDA) return IndexGather(Reshape(Contiguous(input), DimVector{-1}), {index});
  Tensor idx = Contiguous(index);
  Tensor x = Contiguous(input);
  BadIndex bad;
  DispatchBySize(input.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    const U* in = x.data<U>();
    const int64_t* ix = idx.data<int64_t>();
    U* o = out.data<U>();
    ParallelFor(0, out.numel(), kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t j = ix[i] < 0 ? ix[i] + n : ix[i];
        if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(n)) return bad.Note(ix[i]);
        o[i] = in[j];
      }
    });
  });
  if (auto v = bad.get())
    OF_THROW(kIndex) << "out of range: tried to access index " << *v << " on a tensor of " << n << " elements.";
  return out;
}

Tensor IndexSelect(const Tensor& input, int64_t dim, const Tensor& index) {
  OpScope scope("index_select");
  OF_CHECK_INDEX(index.dim() <= 1) << "Index is supposed to be a vector";
  const int d = WrapDim(dim, input.dim());
  OF_CHECK(IsIndexDType(index.dtype(), true)) << "Expected dtype int32 or int64 for index";
  CheckSameDevice(input, index);
  const int64_t n = index.numel();
  DimVector shape = input.sizes();
  if (input.dim() == 0) {
    OF_CHECK_INDEX(n == 1) << "Index to scalar can have only 1 value, got " << n << " value(s)";
  } else {
    shape[d] = n;
  }
  Tensor out = Empty(shape, input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  Tensor idx = Contiguous(index);
  const int64_t size = SizeAt(input, d);
  Tensor x = Contiguous(input);
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < d; ++k) outer *= x.sizes()[k];
  for (int k = d + 1; k < x.dim(); ++k) inner *= x.sizes()[k];
  if (auto v = IndexSelectRows(out, x, idx, outer, size, inner))
    OF_THROW(kRuntime) << "index " << *v << " is out of bounds for dimension " << d << " with size " << size;
  return out;
}

}  // namespace oneflow
