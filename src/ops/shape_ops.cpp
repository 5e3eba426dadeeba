// Views (no copy: reshape-when-possible, view, squeeze, unsqueeze, transpose, permute, expand,
// narrow, split, chunk) and the copying shape ops (cat, stack, contiguous, clone, cast).
#include <cstring>
#include <utility>

#include "core/parallel.h"
#include "ops/copy.h"
#include "ops/promotion.h"
#include "ops/manual_ops.h"
#include "decl/cast.h"
#include "decl/cat.h"
#include "decl/chunk.h"
#include "decl/clone.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/flatten.h"
#include "decl/narrow.h"
#include "decl/permute.h"
#include "decl/reshape.h"
#include "decl/squeeze.h"
#include "decl/stack.h"
#include "decl/transpose.h"
#include "decl/unbind.h"
#include "decl/unsqueeze.h"
#include "decl/view.h"

namespace oneflow {

namespace {

// Resolves one -1 and checks that the element count is preserved.
DimVector InferShape(const DimVector& shape, int64_t numel) {
  DimVector out = shape;
  int infer = -1;
  int64_t prod = 1;
  for (int i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      OF_CHECK(infer < 0) << "only one dimension can be inferred";
      infer = i;
    } else {
      OF_CHECK(out[i] >= 0) << "invalid shape dimension " << out[i] << " [OneFlow: Invalid shape dimension " << out[i]
                            << "]";  // Note [Upstream's words] (src/autograd/meta.cpp)
      prod *= out[i];
    }
  }
  if (infer >= 0) {
    OF_CHECK(prod != 0 && numel % prod == 0)
        << "shape '" << ShapeStr(shape) << "' is invalid for input of size " << numel;
    out[infer] = numel / prod;
  } else {
    OF_CHECK(prod == numel) << "shape '" << ShapeStr(shape) << "' is invalid for input of size "
                            << numel;
  }
  return out;
}

// Strides for viewing `t` as `shape` without copying, if the layout allows it (PyTorch's rule:
// each group of old dims merged or split must be contiguous within itself).
bool ViewStrides(const Tensor& t, const DimVector& shape, DimVector* out) {
  const DimVector& os = t.sizes();
  const DimVector& ost = t.strides();
  if (t.numel() == 0 || os.empty()) {
    *out = ContiguousStrides(shape);
    return true;
  }
  DimVector st(shape.size());
  int view_d = shape.size() - 1;
  int64_t chunk_base = ost[os.size() - 1], tensor_numel = 1, view_numel = 1;
  for (int d = os.size() - 1; d >= 0; --d) {
    tensor_numel *= os[d];
    if (d == 0 || (os[d - 1] != 1 && ost[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        st[view_d] = view_numel * chunk_base;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base = ost[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return false;
  *out = st;
  return true;
}

}  // namespace

Tensor View(const Tensor& input, const DimVector& shape) {
  OpScope scope("view");
  DimVector s = InferShape(shape, input.numel()), st;
  OF_CHECK(ViewStrides(input, s, &st))
      << "view size is not compatible with input tensor's size and stride (at least one dimension "
         "spans across two contiguous subspaces). Use .reshape(...) instead.";
  return MakeView(input, s, st, input.offset());
}

Tensor Reshape(const Tensor& input, const DimVector& shape) {
  OpScope scope("reshape");
  DimVector s = InferShape(shape, input.numel()), st;
  if (ViewStrides(input, s, &st)) return MakeView(input, s, st, input.offset());
  Tensor c = Contiguous(input);
  Tensor out = MakeView(c, s, ContiguousStrides(s), c.offset());
  if (!c.is_same(input)) out.impl()->view_base_.Reset();  // a copy: not a view of anything
  return out;
}

Tensor Flatten(const Tensor& input, int64_t start_dim, int64_t end_dim) {
  OpScope scope("flatten");
  int s = WrapDim(start_dim, input.dim()), e = WrapDim(end_dim, input.dim());  // 0-d: dims 0 / -1
  if (input.dim() == 0) return Reshape(input, DimVector{1});
  OF_CHECK(s <= e) << "flatten() has invalid args: start_dim cannot come after end_dim";
  if (s == e) return input;  // nothing to merge: the input itself, as PyTorch (no view, no node)
  DimVector shape;
  for (int i = 0; i < s; ++i) shape.push_back(input.sizes()[i]);
  int64_t m = 1;
  for (int i = s; i <= e; ++i) m *= input.sizes()[i];
  shape.push_back(m);
  for (int i = e + 1; i < input.dim(); ++i) shape.push_back(input.sizes()[i]);
  return Reshape(input, shape);
}

Tensor Squeeze(const Tensor& input, std::optional<DimVector> dim) {
  OpScope scope("squeeze");
  bool drop[kMaxDims] = {false};
  if (dim) {
    for (int64_t d : *dim) {
      int w = WrapDim(d, input.dim());
      if (input.dim() > 0 && input.sizes()[w] == 1) drop[w] = true;
    }
  } else {
    for (int i = 0; i < input.dim(); ++i) drop[i] = input.sizes()[i] == 1;
  }
  DimVector s, st;
  for (int i = 0; i < input.dim(); ++i) {
    if (drop[i]) continue;
    s.push_back(input.sizes()[i]);
    st.push_back(input.strides()[i]);
  }
  return MakeView(input, s, st, input.offset());
}

Tensor Unsqueeze(const Tensor& input, int64_t dim) {
  OpScope scope("unsqueeze");
  int d = WrapDim(dim, input.dim() + 1);
  DimVector s = input.sizes(), st = input.strides();
  int64_t new_stride = d < input.dim() ? s[d] * st[d] : 1;
  s.insert(d, 1);
  st.insert(d, new_stride);
  return MakeView(input, s, st, input.offset());
}

Tensor Transpose(const Tensor& input, int64_t dim0, int64_t dim1) {
  OpScope scope("transpose");
  int a = WrapDim(dim0, input.dim()), b = WrapDim(dim1, input.dim());
  DimVector s = input.sizes(), st = input.strides();
  if (input.dim() > 0) {
    std::swap(s[a], s[b]);
    std::swap(st[a], st[b]);
  }
  return MakeView(input, s, st, input.offset());
}

Tensor Permute(const Tensor& input, const DimVector& dims) {
  OpScope scope("permute");
  OF_CHECK(dims.size() == input.dim())
      << "number of dims don't match in permute: the input has " << input.dim()
      << " dims but the permutation has " << dims.size();
  DimVector s(input.dim()), st(input.dim());
  bool seen[kMaxDims] = {false};
  for (int i = 0; i < dims.size(); ++i) {
    int d = WrapDim(dims[i], input.dim());
    OF_CHECK(!seen[d]) << "repeated dim in permute";
    seen[d] = true;
    s[i] = input.sizes()[d];
    st[i] = input.strides()[d];
  }
  return MakeView(input, s, st, input.offset());
}

Tensor Expand(const Tensor& input, const DimVector& size) {
  OpScope scope("expand");
  OF_CHECK(size.size() >= input.dim())
      << "the number of sizes provided (" << size.size()
      << ") must be greater or equal to the number of dimensions in the tensor (" << input.dim()
      << ")";
  const int off = size.size() - input.dim();
  DimVector s(size.size()), st(size.size());
  // Back to front, as PyTorch's inferExpandGeometry: a new leading dim of size 1 gets the stride
  // it would have in a contiguous layout over the dims after it (size x stride of the next one),
  // a broadcast one 0 (the strides of size-1 dims are never read; Tensor.stride() shows them).
  for (int i = static_cast<int>(size.size()) - 1; i >= 0; --i) {
    const int j = i - off;
    if (j < 0) {
      OF_CHECK(size[i] >= 0) << "the expanded size of the tensor (" << size[i]
                             << ") isn't allowed in a leading, non-existing dimension " << i;
      s[i] = size[i];
      st[i] = size[i] == 1 && input.dim() > 0 ? s[i + 1] * st[i + 1] : 0;
      continue;
    }
    const int64_t have = input.sizes()[j];
    const int64_t want = size[i] == -1 ? have : size[i];
    OF_CHECK(have == want || have == 1)
        << "The expanded size of the tensor (" << want << ") must match the existing size ("
        << have << ") at non-singleton dimension " << i << ".  Target sizes: " << ShapeStr(size)
        << ".  Tensor sizes: " << ShapeStr(input.sizes());
    s[i] = want;
    st[i] = have == want ? input.strides()[j] : 0;
  }
  return MakeView(input, s, st, input.offset());
}

Tensor Narrow(const Tensor& input, int64_t dim, int64_t start, int64_t length) {
  OpScope scope("narrow");
  OF_CHECK(input.dim() > 0) << "narrow() cannot be applied to a 0-dim tensor.";
  int d = WrapDim(dim, input.dim());
  const int64_t n = input.sizes()[d];
  if (start < 0) start += n;
  OF_CHECK_INDEX(start >= 0 && start <= n) << "start out of range (expected to be in range of ["
                                           << -n << ", " << n << "], but got " << start << ")";
  OF_CHECK(length >= 0 && start + length <= n)
      << "start (" << start << ") + length (" << length << ") exceeds dimension size (" << n
      << ").";
  DimVector s = input.sizes();
  s[d] = length;
  return MakeView(input, s, input.strides(), input.offset() + start * input.strides()[d]);
}

namespace {
// Note [Cat of contiguous rows]: when every input is a contiguous CPU tensor of the output's
// dtype, the output is, for each index of the dims before `d`, the inputs' rows one after the
// other: one memcpy per (row, input), rows split over threads. One strided CopyInto per input
// walked the output once per input with an index computation per element (DLRM's stack of 27
// (512, 64) embeddings into (512, 27, 64), one thread: PyTorch's time before, 0.7x of it after).
// False: CopyInto's general path (other devices, dtype promotion, strided inputs).
bool CatContiguousRows(const Tensor& out, const std::vector<Tensor>& tensors, int d) {
  if (out.device().type != DeviceType::kCPU) return false;
  for (const Tensor& t : tensors)
    if (t.device().type != DeviceType::kCPU || t.dtype() != out.dtype() || !t.is_contiguous()) return false;
  if (out.numel() == 0) return true;
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < d; ++k) outer *= out.sizes()[k];
  for (int k = d + 1; k < out.dim(); ++k) inner *= out.sizes()[k];
  const int64_t es = out.element_size(), out_row = out.sizes()[d] * inner * es;
  std::vector<std::pair<const char*, int64_t>> rows;  // an input's data and bytes per row
  for (const Tensor& t : tensors)
    if (t.numel() > 0) rows.emplace_back(t.raw_data(), t.sizes()[d] * inner * es);
  char* dst = out.raw_data();
  ParallelFor(0, outer, std::max<int64_t>(1, kGrainSize * 4 / out_row), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      char* p = dst + o * out_row;
      for (const auto& [src, bytes] : rows) {
        std::memcpy(p, src + o * bytes, bytes);
        p += bytes;
      }
    }
  });
  return true;
}
}  // namespace

Tensor Cat(const std::vector<Tensor>& tensors, int64_t dim) {
  OpScope scope("cat");
  OF_CHECK(!tensors.empty()) << "expected a non-empty list of Tensors";
  // PyTorch skips 1-D empty tensors (legacy behaviour) when others have a shape.
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors)
    if (!(t.dim() == 1 && t.numel() == 0)) { ref = &t; break; }
  if (!ref) ref = &tensors[0];
  OF_CHECK(ref->dim() > 0) << "zero-dimensional tensor cannot be concatenated";
  int d = WrapDim(dim, ref->dim());
  DType dtype = tensors[0].dtype();
  DimVector shape = ref->sizes();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    dtype = PromoteTypes(dtype, t.dtype());
    CheckSameDevice(*ref, t);
    if (t.dim() == 1 && t.numel() == 0 && ref->dim() != 1) continue;
    OF_CHECK(t.dim() == ref->dim()) << "Tensors must have same number of dimensions: got "
                                    << ref->dim() << " and " << t.dim();
    for (int k = 0; k < t.dim(); ++k)
      OF_CHECK(k == d || t.sizes()[k] == shape[k])
          << "Sizes of tensors must match except in dimension " << d << ". Expected size "
          << shape[k] << " but got size " << t.sizes()[k] << " for tensor number " << i
          << " in the list.";
    total += t.sizes()[d];
  }
  shape[d] = total;
  Tensor out = Empty(shape, dtype, ref->device());
  std::vector<Tensor> kept;  // without the skipped legacy empties
  for (const Tensor& t : tensors)
    if (!(t.dim() == 1 && t.numel() == 0 && ref->dim() != 1)) kept.push_back(t);
  if (CatContiguousRows(out, kept, d)) return out;
  int64_t pos = 0;
  for (const Tensor& t : kept) {
    const int64_t len = t.sizes()[d];
    DimVector s = shape;
    s[d] = len;
    CopyInto(MakeView(out, s, out.strides(), pos * out.strides()[d]), t);
    pos += len;
  }
  return out;
}

Tensor Stack(const std::vector<Tensor>& tensors, int64_t dim) {
  OpScope scope("stack");
  OF_CHECK(!tensors.empty()) << "stack expects a non-empty TensorList";
  int d = WrapDim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    OF_CHECK(tensors[i].sizes() == tensors[0].sizes())
        << "stack expects each tensor to be equal size, but got " << ShapeStr(tensors[0].sizes())
        << " at entry 0 and " << ShapeStr(tensors[i].sizes()) << " at entry " << i;
    parts.push_back(Unsqueeze(tensors[i], d));
  }
  return Cat(parts, d);
}

// Piece sizes are a std::vector, not a DimVector: a tensor splits into any number of pieces.
std::vector<Tensor> SplitWithSizes(const Tensor& input, const std::vector<int64_t>& sizes, int64_t dim) {
  OpScope scope("split");
  OF_CHECK(input.dim() > 0) << "split expects at least a 1-dimensional tensor";
  int d = WrapDim(dim, input.dim());
  int64_t sum = 0;
  for (int64_t s : sizes) {
    OF_CHECK(s >= 0) << "split_with_sizes expects split_sizes have only non-negative entries";
    sum += s;
  }
  if (sum != input.sizes()[d]) {
    std::string list = "[";
    for (size_t i = 0; i < sizes.size(); ++i) list += (i ? ", " : "") + std::to_string(sizes[i]);
    OF_CHECK(false) << "split_with_sizes expects split_sizes to sum exactly to " << input.sizes()[d]
                    << " (input tensor's size at dimension " << d << "), but got split_sizes="
                    << list << "]";
  }
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(Narrow(input, d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> Unbind(const Tensor& input, int64_t dim) {
  OpScope scope("unbind");
  OF_CHECK_INDEX(input.dim() > 0) << "Dimension specified as " << dim << " but tensor has no dimensions";
  const int d = WrapDim(dim, input.dim());
  std::vector<Tensor> out;
  // Views outside the graph: functional::Unbind records one node for all of them (stack of the
  // gradients), not one select node per piece with a full-size gradient buffer each.
  for (int64_t i = 0; i < input.sizes()[d]; ++i) out.push_back(SelectView(input, d, i));
  return out;
}

std::vector<Tensor> SplitBySize(const Tensor& input, int64_t split_size, int64_t dim) {
  OpScope scope("split");
  OF_CHECK(input.dim() > 0) << "split expects at least a 1-dimensional tensor";
  OF_CHECK(split_size >= 0) << "split expects split_size be non-negative, but got split_size="
                            << split_size;
  int d = WrapDim(dim, input.dim());
  const int64_t n = input.sizes()[d];
  OF_CHECK(split_size > 0 || n == 0) << "split_size can only be 0 if dimension size is 0";
  std::vector<int64_t> sizes;
  if (split_size == 0) {
    sizes.push_back(0);
  } else {
    for (int64_t s = 0; s < n; s += split_size) sizes.push_back(std::min(split_size, n - s));
    if (n == 0) sizes.push_back(0);
  }
  return SplitWithSizes(input, sizes, d);
}

std::vector<Tensor> Chunk(const Tensor& input, int64_t chunks, int64_t dim) {
  OpScope scope("chunk");
  OF_CHECK(input.dim() > 0) << "chunk expects at least a 1-dimensional tensor";
  OF_CHECK(chunks > 0) << "chunk expects `chunks` to be greater than 0, got: " << chunks;
  int d = WrapDim(dim, input.dim());
  const int64_t n = input.sizes()[d];
  // OneFlow's rule (its documented example splits 9 into 2, 2, 2, 3): always `chunks` pieces of
  // n / chunks elements, the last one taking the remainder. PyTorch's differs when chunks does
  // not divide n (docs/oneflow_differences.md).
  // Past the dimension's size the pieces are empty, one tensor each: 2**62 of them cannot be made.
  constexpr int64_t kMaxEmptyPieces = int64_t{1} << 16;
  OF_CHECK(chunks <= std::max(n, kMaxEmptyPieces))
      << "chunks = " << chunks << " would make " << chunks << " tensors of a dimension of size " << n
      << " (at most max(size, " << kMaxEmptyPieces << "))";
  const int64_t size = n / chunks;
  std::vector<int64_t> sizes(chunks, size);
  sizes[chunks - 1] = n - size * (chunks - 1);
  return SplitWithSizes(input, sizes, d);
}

Tensor Cast(const Tensor& input, DType dtype) {
  OpScope scope("cast");
  return CastTo(input, dtype);
}

Tensor Clone(const Tensor& input) {
  OpScope scope("clone");
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  CopyInto(out, input);
  return out;
}

}  // namespace oneflow
