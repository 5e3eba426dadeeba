// Composite copying shape ops (`backward: composite` in shape_copy.yaml): rotations, diagonal
// matrices, repetition and stacking, built from differentiable table ops. Repetition is an
// expand (a stride-0 view) copied out by the copy engine, as PyTorch does it.
#include "autograd/functional.h"
#include "core/tensor.h"
#include "ops/copy.h"
#include "decl/atleast_1d.h"
#include "decl/atleast_2d.h"
#include "decl/atleast_3d.h"
#include "decl/cast.h"
#include "decl/cat.h"
#include "decl/clone.h"
#include "decl/column_stack.h"
#include "decl/contiguous.h"
#include "decl/diag.h"
#include "decl/diag_embed.h"
#include "decl/diagflat.h"
#include "decl/diagonal.h"
#include "decl/dstack.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/flip.h"
#include "decl/fliplr.h"
#include "decl/flipud.h"
#include "decl/hstack.h"
#include "decl/repeat.h"
#include "decl/repeat_interleave.h"
#include "decl/reshape.h"
#include "decl/rot90.h"
#include "decl/tile.h"
#include "decl/transpose.h"
#include "decl/unsqueeze.h"
#include "decl/vstack.h"

namespace oneflow::functional {

Tensor Fliplr(const Tensor& input) {
  OpScope scope("fliplr");
  OF_CHECK(input.dim() >= 2) << "Input must be >= 2-d.";
  return functional::Flip(input, DimVector{1});
}

Tensor Flipud(const Tensor& input) {
  OpScope scope("flipud");
  OF_CHECK(input.dim() >= 1) << "Input must be >= 1-d.";
  return functional::Flip(input, DimVector{0});
}

Tensor Rot90(const Tensor& input, int64_t k, const DimVector& dims) {
  OpScope scope("rot90");
  OF_CHECK(dims.size() == 2) << "expected total rotation dims == 2, but got dims = " << dims.size();
  OF_CHECK(input.dim() >= 2) << "expected total dims >= 2, but got total dims = " << input.dim();
  const int d0 = WrapDim(dims[0], input.dim()), d1 = WrapDim(dims[1], input.dim());
  OF_CHECK(d0 != d1) << "expected rotation dims to be different, but got dim0 = " << d0 << " and dim1 = " << d1;
  switch (((k % 4) + 4) % 4) {
    case 1: return functional::Transpose(functional::Flip(input, DimVector{d1}), d0, d1);
    case 2: return functional::Flip(input, DimVector{d0, d1});
    case 3: return functional::Transpose(functional::Flip(input, DimVector{d0}), d0, d1);
    default: return functional::Clone(input);
  }
}

Tensor Diag(const Tensor& input, int64_t diagonal) {
  OpScope scope("diag");
  OF_CHECK(input.dim() == 1 || input.dim() == 2) << "Supports 1D or 2D tensors. Got " << input.dim() << "D";
  if (input.dim() == 1) return functional::DiagEmbed(input, diagonal, 0, 1);
  return functional::Clone(functional::Diagonal(input, diagonal, 0, 1));
}

Tensor Diagflat(const Tensor& input, int64_t offset) {
  OpScope scope("diagflat");
  return functional::DiagEmbed(functional::Reshape(input, DimVector{-1}), offset, 0, 1);
}

namespace {
// A fresh tensor: a reshape of an expanded view copies, but one that could stay a view must not
// alias the input (repeat/tile always return new memory, as PyTorch's).
Tensor Fresh(const Tensor& t, const Tensor& input) {
  return t.storage() == input.storage() ? functional::Clone(t) : t;
}
}  // namespace

Tensor Repeat(const Tensor& input, const DimVector& sizes) {
  OpScope scope("repeat");
  OF_CHECK(sizes.size() >= input.dim())
      << "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor";
  for (int64_t r : sizes)
    OF_CHECK(r >= 0) << "Trying to create tensor with negative dimension " << r << ": " << ShapeStr(sizes);
  // input viewed as [.., 1, s_i, ..] (a unit dim before each repeated dim), expanded to
  // [.., r_i, s_i, ..], then laid out as [.., r_i * s_i, ..].
  const int pad = sizes.size() - input.dim();
  DimVector view, expanded, result;
  for (int i = 0; i < sizes.size(); ++i) {
    const int64_t s = i < pad ? 1 : input.sizes()[i - pad];
    if (sizes[i] != 1) {
      view.push_back(1);
      expanded.push_back(sizes[i]);
    }
    view.push_back(s);
    expanded.push_back(s);
    result.push_back(s * sizes[i]);
  }
  Tensor e = functional::Expand(functional::Reshape(input, view), expanded);
  return Fresh(functional::Reshape(e, result), input);
}

Tensor Tile(const Tensor& input, const DimVector& dims) {
  OpScope scope("tile");
  // Fewer reps than dims: ones are prepended (numpy's tile); more: repeat adds the new dims.
  DimVector reps;
  for (int i = dims.size(); i < input.dim(); ++i) reps.push_back(1);
  for (int64_t r : dims) reps.push_back(r);
  return functional::Repeat(input, reps);
}

Tensor RepeatInterleave(const Tensor& input, const Tensor& repeats, std::optional<int64_t> dim,
                        std::optional<int64_t> output_size) {
  OpScope scope("repeat_interleave");
  OF_CHECK(repeats.dim() <= 1) << "repeats must be 0-dim or 1-dim tensor";
  OF_CHECK(!IsFloating(repeats.dtype()) && repeats.dtype() != DType::kBool)
      << "repeats has to be Long or Int tensor, got " << DTypeName(repeats.dtype());
  Tensor x = dim ? input : functional::Reshape(input, DimVector{-1});
  const int d = dim ? WrapDim(*dim, x.dim()) : 0;
  const int64_t n = x.dim() == 0 ? 1 : x.sizes()[d];
  if (x.dim() == 0) x = functional::Reshape(x, DimVector{1});
  if (repeats.dim() == 1)
    OF_CHECK(repeats.numel() == n || repeats.numel() == 1)
        << "repeats must have the same size as input along dim, but got repeats.size(0) = " << repeats.numel()
        << " and input.size(" << d << ") = " << n;
  if (repeats.numel() == 1) {
    // One count for every element: unsqueeze, expand, merge: a view copied by the copy engine.
    CheckHasData(repeats);
    const int64_t r = ItemOf(repeats).ToInt();
    OF_CHECK(r >= 0) << "repeats can not be negative";
    if (output_size) OF_CHECK(*output_size == n * r) << "allocated size does not match required size";
    DimVector shape = x.sizes();
    shape.insert(d + 1, r);
    Tensor e = functional::Expand(functional::Unsqueeze(x, d + 1), shape);
    DimVector merged = x.sizes();
    merged[d] = n * r;
    return Fresh(functional::Reshape(e, merged), input);
  }
  // Per-element counts: the output length depends on the values (on the meta device only when
  // output_size says it).
  if (repeats.device().type == DeviceType::kMeta || x.device().type == DeviceType::kMeta) {
    OF_CHECK(output_size.has_value()) << "repeat_interleave needs the values of `repeats` (or output_size) to "
                                         "know its output's size, and a meta tensor has none";
    DimVector shape = x.sizes();
    shape[d] = *output_size;
    return ::oneflow::Empty(shape, x.dtype(), x.device());
  }
  // Read on the host (CUDA counts through a copy); the gather below runs on x's device.
  Tensor counts = ::oneflow::Contiguous(::oneflow::Cast(OnHost(repeats), DType::kInt64));
  const int64_t* c = counts.data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    OF_CHECK(c[i] >= 0) << "repeats can not be negative";
    total += c[i];
  }
  if (output_size) OF_CHECK(*output_size == total) << "allocated size does not match required size";
  Tensor index = ::oneflow::Empty(DimVector{total}, DType::kInt64);
  int64_t* ip = index.data<int64_t>();
  for (int64_t i = 0, k = 0; i < n; ++i)
    for (int64_t j = 0; j < c[i]; ++j) ip[k++] = i;
  std::vector<Tensor> idx(d);
  idx.push_back(index);
  return functional::IndexGather(x, idx);
}

namespace {
void CheckNonEmpty(const std::vector<Tensor>& tensors, const char* name) {
  OF_CHECK(!tensors.empty()) << name << " expects a non-empty TensorList";
}
}  // namespace

Tensor Hstack(const std::vector<Tensor>& tensors) {
  OpScope scope("hstack");
  CheckNonEmpty(tensors, "hstack");
  std::vector<Tensor> ts;
  for (const Tensor& t : tensors) ts.push_back(functional::Atleast1d(t));
  return functional::Cat(ts, ts[0].dim() == 1 ? 0 : 1);
}

Tensor Vstack(const std::vector<Tensor>& tensors) {
  OpScope scope("vstack");
  CheckNonEmpty(tensors, "vstack");
  std::vector<Tensor> ts;
  for (const Tensor& t : tensors) ts.push_back(functional::Atleast2d(t));
  return functional::Cat(ts, 0);
}

Tensor Dstack(const std::vector<Tensor>& tensors) {
  OpScope scope("dstack");
  CheckNonEmpty(tensors, "dstack");
  std::vector<Tensor> ts;
  for (const Tensor& t : tensors) ts.push_back(functional::Atleast3d(t));
  return functional::Cat(ts, 2);
}

Tensor ColumnStack(const std::vector<Tensor>& tensors) {
  OpScope scope("column_stack");
  CheckNonEmpty(tensors, "column_stack");
  std::vector<Tensor> ts;
  for (const Tensor& t : tensors)
    ts.push_back(t.dim() <= 1 ? functional::Reshape(t, DimVector{t.numel(), 1}) : t);
  return functional::Cat(ts, 1);
}

}  // namespace oneflow::functional
