// Updates of whole slices picked by a 1-d index along a dim: index_add, index_fill, index_copy
// (and their in-place forms). The tensor is seen as [outer, size, inner]; slice j of the source
// goes to slice index[j] of self (kernels/index_slices.h). Repeated indices are applied in index
// order (index_add sums, index_copy keeps the last), as PyTorch's CPU kernels do.
#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "ops/pointwise.h"

#include <limits>
#include "kernels/index_slices.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/index_add.h"
#include "decl/index_copy.h"
#include "decl/index_fill.h"
#include "decl/index_put.h"
#include "decl/reshape.h"
#include "decl/slice_update.h"

namespace oneflow {

namespace {

Slices SlicesOf(const Tensor& t, int d) {
  Slices s;
  if (t.dim() == 0) return s;
  for (int k = 0; k < d; ++k) s.outer *= t.sizes()[k];
  s.size = t.sizes()[d];
  for (int k = d + 1; k < t.dim(); ++k) s.inner *= t.sizes()[k];
  return s;
}

// The index (int64, contiguous) with every value in [-size, size) (negatives wrapped when
// allowed) or an IndexError naming the value.
Tensor CheckedSliceIndex(const Tensor& index, int d, int64_t size, bool allow_negative,
                         ErrorKind kind = ErrorKind::kIndex) {
  Tensor idx = Contiguous(CastTo(index, DType::kInt64));
  if (idx.device().type == DeviceType::kMeta) return idx;
  if (auto bad = FindOutOfRange(idx, allow_negative ? -size : 0, size))
    ErrorBuilder(kind) << "index " << *bad << " is out of bounds for dimension " << d << " with size " << size;
  if (allow_negative && idx.device().type == DeviceType::kCUDA) {  // wrapped in a host copy
    const Tensor h = OnHost(idx);  // idx: contiguous int64 already
    Tensor w = Empty(h.sizes(), DType::kInt64);
    const int64_t* hp = h.data<int64_t>();
    int64_t* wp = w.data<int64_t>();
    for (int64_t i = 0; i < h.numel(); ++i) wp[i] = hp[i] + (hp[i] < 0 ? size : 0);
    return MovedTo(w, idx.device());
  }
  if (allow_negative) {
    int64_t* p = idx.data<int64_t>();
    if (idx.is_same(index)) {
      idx = Empty(index.sizes(), DType::kInt64, index.device());
      CopyInto(idx, index);
      p = idx.data<int64_t>();
    }
    for (int64_t i = 0; i < idx.numel(); ++i) p[i] += p[i] < 0 ? size : 0;
  }
  return idx;
}

// PyTorch's index_add raises IndexError for an out-of-range index into a 1-d self (its
// index_select-style path) and RuntimeError otherwise.
ErrorKind AddIndexError(const Tensor& self) { return self.dim() <= 1 ? ErrorKind::kIndex : ErrorKind::kRuntime; }

// Runs `update(contiguous self)` on self, through a contiguous copy when self is a strided view.
template <typename F>
void OnContiguous(const Tensor& self, const F& update) {
  if (self.is_contiguous()) {
    update(self);
    return;
  }
  Tensor c = Contiguous(self);
  update(c);
  CopyInto(self, c);
}

// index_add / index_copy checks (PyTorch's wording; index_copy's are IndexErrors).
void CheckSourceShape(const Tensor& self, int d, const Tensor& index, const Tensor& source, bool copy) {
  if (copy) {
    OF_CHECK(source.dtype() == self.dtype())
        << "self and source expected to have the same dtype, but got (self) " << DTypeName(self.dtype())
        << " and (source) " << DTypeName(source.dtype());
    OF_CHECK_INDEX(self.dim() == 0 || source.dim() == 0 || source.dim() == self.dim())
        << "When source and destination are not scalars, their dimensionality must match. Source "
        << "dimensionality (" << source.dim() << "), destination dimensionality (" << self.dim() << ")";
    const int64_t ssize = source.dim() == 0 ? 1 : source.sizes()[d];
    OF_CHECK_INDEX(index.numel() == ssize) << "Number of indices (" << index.numel()
                                           << ") should be equal to source.size(dim) (" << ssize << ")";
    for (int k = 0; k < source.dim() && source.dim() == self.dim(); ++k)
      OF_CHECK(k == d || source.sizes()[k] == self.sizes()[k])
          << "Source/destination tensor must have same slice shapes. Destination slice shape: "
          << self.sizes()[k] << " at dimension " << k << " and source slice shape: " << source.sizes()[k]
          << " at dimension " << k << ".";
    return;
  }
  OF_CHECK(source.dtype() == self.dtype()) << "self (" << DTypeName(self.dtype()) << ") and source ("
                                           << DTypeName(source.dtype()) << ") must have the same scalar type";
  bool same = source.dim() == self.dim();
  for (int k = 0; same && k < self.dim(); ++k) same = k == d || source.sizes()[k] == self.sizes()[k];
  OF_CHECK(same || (self.dim() == 0 && source.dim() == 0))
      << "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = "
      << ShapeStr(self.sizes()) << " source.shape = " << ShapeStr(source.sizes());
  const int64_t ssize = source.dim() == 0 ? 1 : source.sizes()[d];
  OF_CHECK(index.numel() == ssize) << "Number of indices (" << index.numel()
                                   << ") should be equal to source.size(dim): (" << ssize << "), for dim: " << d;
}

int CheckSliceIndex(const Tensor& self, int64_t dim, const Tensor& index, bool int32_ok, const char* op) {
  const int d = WrapDim(dim, self.dim());
  OF_CHECK_INDEX(index.dim() <= 1) << "Index is supposed to be a vector, but got dim: " << index.dim()
                                   << " and size: " << ShapeStr(index.sizes());
  OF_CHECK(IsIndexDType(index.dtype(), int32_ok))
      << "Expected dtype " << (int32_ok ? "int32/int64" : "int64") << " for index but got: "
      << DTypeName(index.dtype());
  CheckSameDevice(self, index);
  return d;
}

void IndexAddInto(const Tensor& self, int d, const Tensor& idx, const Tensor& source, const Scalar& alpha) {
  if (idx.numel() == 0 || self.numel() == 0 || self.device().type == DeviceType::kMeta) return;
  const Slices s = SlicesOf(self, d);
  Tensor src = Contiguous(source);
  OnContiguous(self, [&](const Tensor& c) { IndexAddSlices(c, s, idx, src, alpha); });
}

// CUDA: index_copy / index_fill as self[:, ..., idx] = values (dim d), through index_put's
// kernels (a 0-d self or index as one element).
void PutAlongDim(const Tensor& self, int d, const Tensor& idx, const Tensor& values) {
  Tensor target = self.dim() == 0 ? Reshape(self, DimVector{1}) : self;
  std::vector<Tensor> indices(d);
  indices.push_back(idx.dim() == 0 ? Reshape(idx, DimVector{1}) : idx);
  IndexPut_(target, indices, values, false);
}

void IndexCopyInto(const Tensor& self, int d, const Tensor& idx, const Tensor& source) {
  if (idx.numel() == 0 || self.numel() == 0 || self.device().type == DeviceType::kMeta) return;
  if (self.device().type == DeviceType::kCUDA) {
    PutAlongDim(self, d, idx, source);
    return;
  }
  const Slices s = SlicesOf(self, d);
  Tensor src = Contiguous(source);
  OnContiguous(self, [&](const Tensor& c) {
    DispatchBySize(self.element_size(), [&](auto tag) {
      using U = typename std::decay_t<decltype(tag)>::type;
      SliceUpdate<U>(c, s, idx, src, [](U, U y) { return y; });
    });
  });
}

void IndexFillInto(const Tensor& self, int d, const Tensor& idx, const Scalar& v) {
  if (idx.numel() == 0 || self.numel() == 0 || self.device().type == DeviceType::kMeta) return;
  if (self.device().type == DeviceType::kCUDA) {
    PutAlongDim(self, d, idx, ScalarToTensor(v, self.dtype()));
    return;
  }
  const Slices s = SlicesOf(self, d);
  OnContiguous(self, [&](const Tensor& c) {
    DispatchAllAndComplex(self.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      const T fill = v.To<T>();
      const int64_t n = idx.numel();
      const int64_t* ix = idx.data<int64_t>();
      T* sp = c.data<T>();
      ForSlices(s, n, [&](int64_t o, int64_t ib, int64_t ie) {
        for (int64_t j = 0; j < n; ++j) {
          T* dst = sp + (o * s.size + ix[j]) * s.inner;
          for (int64_t i = ib; i < ie; ++i) dst[i] = fill;
        }
      });
    });
  });
}

Tensor CloneOf(const Tensor& input) {
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  if (input.device().type != DeviceType::kMeta) CopyInto(out, input);
  return out;
}

}  // namespace

Tensor IndexAdd(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  OpScope scope("index_add");
  const int d = CheckSliceIndex(input, dim, index, true, "index_add_");
  CheckSourceShape(input, d, index, source, false);
  Tensor idx = CheckedSliceIndex(index, d, SizeAt(input, d), false, AddIndexError(input));
  Tensor out = CloneOf(input);
  IndexAddInto(out, d, idx, source, alpha);
  return out;
}

Tensor& IndexAdd_(Tensor& input, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  OpScope scope("index_add_");
  const int d = CheckSliceIndex(input, dim, index, true, "index_add_");
  CheckSourceShape(input, d, index, source, false);
  Tensor idx = CheckedSliceIndex(index, d, SizeAt(input, d), false, AddIndexError(input));
  IndexAddInto(input, d, idx, Unaliased(source, input), alpha);
  input.BumpVersion();
  return input;
}

Tensor IndexCopy(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& source) {
  OpScope scope("index_copy");
  const int d = WrapDim(dim, input.dim());
  OF_CHECK_INDEX(index.dim() <= 1) << "Index should have dimension 1 or 0 (got " << index.dim() << ")";
  OF_CHECK(index.dtype() == DType::kInt64)
      << "Expected a long tensor for index, but got " << DTypeName(index.dtype());
  CheckSourceShape(input, d, index, source, true);
  Tensor idx = CheckedSliceIndex(index, d, SizeAt(input, d), false);
  Tensor out = CloneOf(input);
  IndexCopyInto(out, d, idx, source);
  return out;
}

Tensor& IndexCopy_(Tensor& input, int64_t dim, const Tensor& index, const Tensor& source) {
  OpScope scope("index_copy_");
  const int d = WrapDim(dim, input.dim());
  OF_CHECK_INDEX(index.dim() <= 1) << "Index should have dimension 1 or 0 (got " << index.dim() << ")";
  OF_CHECK(index.dtype() == DType::kInt64)
      << "Expected a long tensor for index, but got " << DTypeName(index.dtype());
  CheckSourceShape(input, d, index, source, true);
  Tensor idx = CheckedSliceIndex(index, d, SizeAt(input, d), false);
  IndexCopyInto(input, d, idx, Unaliased(source, input));
  input.BumpVersion();
  return input;
}

Tensor IndexFill(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& value) {
  OpScope scope("index_fill");
  const int d = WrapDim(dim, input.dim());
  OF_CHECK_INDEX(index.dtype() == DType::kInt64) << "Expected dtype int64 for index.";
  OF_CHECK(index.dim() <= 1) << "Index has to be a vector/scalar";
  const Scalar v = FillValue(value, input.dtype(), "index_fill_");
  Tensor idx = CheckedSliceIndex(index, d, SizeAt(input, d), true);
  Tensor out = CloneOf(input);
  IndexFillInto(out, d, idx, v);
  return out;
}

Tensor& IndexFill_(Tensor& input, int64_t dim, const Tensor& index, const Tensor& value) {
  OpScope scope("index_fill_");
  const int d = WrapDim(dim, input.dim());
  OF_CHECK_INDEX(index.dtype() == DType::kInt64) << "Expected dtype int64 for index.";
  OF_CHECK(index.dim() <= 1) << "Index has to be a vector/scalar";
  const Scalar v = FillValue(value, input.dtype(), "index_fill_");
  Tensor idx = CheckedSliceIndex(index, d, SizeAt(input, d), true);
  IndexFillInto(input, d, idx, v);
  input.BumpVersion();
  return input;
}

}  // namespace oneflow
