// Views with their own layout rules: t, diagonal, select, unfold (sliding windows), as_strided.
// Each is a new (sizes, strides, offset) over the input's storage: no data moves.
#include "ops/manual_ops.h"
#include "decl/as_strided.h"
#include "decl/diagonal.h"
#include "decl/select.h"
#include "decl/t.h"
#include "decl/transpose.h"
#include "decl/unfold.h"

namespace oneflow {

Tensor T(const Tensor& input) {
  OpScope scope("t");
  OF_CHECK(input.dim() <= 2) << "t() expects a tensor with <= 2 dimensions, but self is " << input.dim()
                             << "D";
  if (input.dim() < 2) return MakeView(input, input.sizes(), input.strides(), input.offset());
  return Transpose(input, 0, 1);
}

// Note [Diagonal geometry]: the diagonal `offset` of dims (d1, d2) has length
// min(n1, n2 - offset) (offset >= 0) or min(n1 + offset, n2) (offset < 0), clamped at 0; it starts
// at element (0, offset) or (-offset, 0) and steps by stride1 + stride2. diag_embed writes through
// the same view of its output.
Tensor Diagonal(const Tensor& input, int64_t offset, int64_t dim1, int64_t dim2) {
  OpScope scope("diagonal");
  const int d1 = WrapDim(dim1, input.dim()), d2 = WrapDim(dim2, input.dim());
  OF_CHECK(d1 != d2) << "diagonal dimensions cannot be identical " << dim1 << ", " << dim2;
  const int64_t n1 = input.sizes()[d1], n2 = input.sizes()[d2];
  int64_t len = offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2);
  len = std::max<int64_t>(len, 0);
  int64_t start = input.offset();
  if (len > 0) start += offset >= 0 ? offset * input.strides()[d2] : -offset * input.strides()[d1];
  DimVector s, st;
  for (int i = 0; i < input.dim(); ++i) {
    if (i == d1 || i == d2) continue;
    s.push_back(input.sizes()[i]);
    st.push_back(input.strides()[i]);
  }
  s.push_back(len);
  st.push_back(input.strides()[d1] + input.strides()[d2]);
  return MakeView(input, s, st, start);
}

Tensor Select(const Tensor& input, int64_t dim, int64_t index) {
  OpScope scope("select");
  OF_CHECK_INDEX(input.dim() > 0) << "select() cannot be applied to a 0-dim tensor.";
  const int d = WrapDim(dim, input.dim());
  const int64_t n = input.sizes()[d];
  OF_CHECK_INDEX(index >= -n && index < n) << "index " << index << " out of range for tensor of size "
                                           << ShapeStr(input.sizes()) << " at dimension " << d;
  return SelectView(input, d, index);
}

Tensor Unfold(const Tensor& input, int64_t dimension, int64_t size, int64_t step) {
  OpScope scope("unfold");
  const int d = WrapDim(dimension, input.dim());
  const int64_t n = input.dim() == 0 ? 1 : input.sizes()[d];
  OF_CHECK(size <= n) << "maximum size for tensor at dimension " << d << " is " << n << " but size is "
                      << size;
  OF_CHECK(size >= 0) << "size is " << size << " but must be >= 0";
  OF_CHECK(step > 0) << "step is " << step << " but must be > 0";
  DimVector s = input.sizes(), st = input.strides();
  if (input.dim() == 0) {  // a 0-d tensor unfolds to shape [size] (PyTorch)
    return MakeView(input, DimVector{size}, DimVector{1}, input.offset());
  }
  const int64_t inner = st[d];
  s[d] = (n - size) / step + 1;
  st[d] = inner * step;
  s.push_back(size);
  st.push_back(inner);
  return MakeView(input, s, st, input.offset());
}

Tensor AsStrided(const Tensor& input, const DimVector& size, const DimVector& stride,
                 std::optional<int64_t> storage_offset) {
  OpScope scope("as_strided");
  OF_CHECK(size.size() == stride.size()) << "mismatch in length of strides and shape";
  for (int64_t s : size) OF_CHECK(s >= 0) << "Trying to create tensor with negative dimension " << s
                                          << ": " << ShapeStr(size);
  for (int64_t s : stride)
    OF_CHECK(s >= 0) << "as_strided: Negative strides are not supported at the moment, got strides: "
                     << ShapeStr(stride);
  const int64_t offset = storage_offset.value_or(input.offset());
  OF_CHECK(offset >= 0) << "Tensor: invalid storage offset " << offset;
  // The view must stay inside the storage (it is shared with the input).
  int64_t need = 0;
  if (NumelOf(size) > 0) {
    need = offset + 1;
    for (int i = 0; i < size.size(); ++i) need += (size[i] - 1) * stride[i];
  }
  const int64_t es = input.element_size();
  const int64_t have = static_cast<int64_t>(input.storage()->nbytes()) / es;
  OF_CHECK(need <= have) << "setStorage: sizes " << ShapeStr(size) << ", strides " << ShapeStr(stride)
                         << ", storage offset " << offset << ", and itemsize " << es
                         << " requiring a storage size of " << need * es
                         << " are out of bounds for storage of size " << have * es;
  return MakeView(input, size, stride, offset);
}

}  // namespace oneflow
