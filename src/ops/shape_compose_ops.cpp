// Composite view ops of the shape family (`backward: composite` in shape.yaml): differentiable
// entries built from other table ops, so their gradients (and meta inference) are those ops'.
// The checks come first, under the op's own name (OpScope: the outermost op names the error).
#include <algorithm>
#include <limits>

#include "autograd/functional.h"
#include "ops/copy.h"
#include "ops/promotion.h"
#include "decl/atleast_1d.h"
#include "decl/atleast_2d.h"
#include "decl/atleast_3d.h"
#include "decl/broadcast_tensors.h"
#include "decl/broadcast_to.h"
#include "decl/expand.h"
#include "decl/expand_as.h"
#include "decl/meshgrid.h"
#include "decl/movedim.h"
#include "decl/permute.h"
#include "decl/ravel.h"
#include "decl/reshape.h"
#include "decl/reshape_as.h"
#include "decl/slice.h"
#include "decl/slice_update.h"
#include "decl/tensor_split.h"
#include "decl/unflatten.h"
#include "decl/unsqueeze.h"
#include "decl/view.h"
#include "decl/view_as.h"

namespace oneflow::functional {

Tensor Movedim(const Tensor& input, const DimVector& source, const DimVector& destination) {
  OpScope scope("movedim");
  OF_CHECK(source.size() == destination.size())
      << "Invalid source or destination dims: source (" << ShapeStr(source)
      << " dims) should contain the same number of dims as destination (" << ShapeStr(destination) << " dims)";
  const int nd = input.dim();
  int64_t order[kMaxDims];
  bool used_src[kMaxDims] = {false}, used_dst[kMaxDims] = {false};
  std::fill(order, order + kMaxDims, -1);
  for (int i = 0; i < source.size(); ++i) {
    const int s = WrapDim(source[i], nd), d = WrapDim(destination[i], nd);
    OF_CHECK(!used_src[s]) << "repeated dim in `source` (" << ShapeStr(source) << ")";
    OF_CHECK(!used_dst[d]) << "repeated dim in `destination` (" << ShapeStr(destination) << ")";
    used_src[s] = used_dst[d] = true;
    order[d] = s;
  }
  // The dims not moved keep their relative order in the free slots.
  int next = 0;
  for (int d = 0; d < nd; ++d) {
    if (order[d] >= 0) continue;
    while (used_src[next]) ++next;
    order[d] = next++;
  }
  DimVector perm;
  for (int d = 0; d < nd; ++d) perm.push_back(order[d]);
  return functional::Permute(input, perm);
}

Tensor Unflatten(const Tensor& input, int64_t dim, const DimVector& sizes) {
  OpScope scope("unflatten");
  const int d = WrapDim(dim, input.dim());
  OF_CHECK(!sizes.empty()) << "sizes must be non-empty";
  int64_t prod = 1, infer = -1;
  for (int i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      OF_CHECK(infer < 0) << "only one dimension can be inferred";
      infer = i;
    } else {
      OF_CHECK(sizes[i] >= 0) << "invalid size " << sizes[i];
      prod *= sizes[i];
    }
  }
  const int64_t n = input.sizes()[d];
  DimVector s = sizes;
  if (infer >= 0) {
    OF_CHECK(prod != 0 && n % prod == 0) << "Provided sizes " << ShapeStr(sizes)
                                         << " don't multiply up to the size of dim " << dim << " (" << n
                                         << ") in the input tensor";
    s[infer] = n / prod;
  } else {
    OF_CHECK(prod == n) << "Provided sizes " << ShapeStr(sizes) << " don't multiply up to the size of dim "
                        << dim << " (" << n << ") in the input tensor";
  }
  DimVector shape;
  for (int i = 0; i < d; ++i) shape.push_back(input.sizes()[i]);
  for (int64_t v : s) shape.push_back(v);
  for (int i = d + 1; i < input.dim(); ++i) shape.push_back(input.sizes()[i]);
  return functional::View(input, shape);  // splitting one dim is always a view
}

Tensor Ravel(const Tensor& input) {
  OpScope scope("ravel");
  return functional::Reshape(input, DimVector{-1});
}

Tensor BroadcastTo(const Tensor& input, const DimVector& size) {
  OpScope scope("broadcast_to");
  return functional::Expand(input, size);
}

Tensor ExpandAs(const Tensor& input, const Tensor& other) {
  OpScope scope("expand_as");
  return functional::Expand(input, other.sizes());
}

Tensor ViewAs(const Tensor& input, const Tensor& other) {
  OpScope scope("view_as");
  return functional::View(input, other.sizes());
}

Tensor ReshapeAs(const Tensor& input, const Tensor& other) {
  OpScope scope("reshape_as");
  return functional::Reshape(input, other.sizes());
}

std::vector<Tensor> TensorSplit(const Tensor& input, const DimVector& indices, int64_t dim) {
  OpScope scope("tensor_split");
  OF_CHECK(input.dim() > 0) << "tensor_split expected at least a 1-dimensional tensor, but got a tensor with "
                            << input.dim() << " dims";
  const int d = WrapDim(dim, input.dim());
  // input[:i0], input[i0:i1], ..., input[ik:] with Python slice clamping.
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t idx : indices) {
    out.push_back(functional::SliceView(input, d, start, idx, 1));
    start = idx;
  }
  out.push_back(functional::SliceView(input, d, start, std::numeric_limits<int64_t>::max(), 1));
  return out;
}

Tensor Atleast1d(const Tensor& input) {
  OpScope scope("atleast_1d");
  return input.dim() == 0 ? functional::Reshape(input, DimVector{1}) : input;
}

Tensor Atleast2d(const Tensor& input) {
  OpScope scope("atleast_2d");
  if (input.dim() == 0) return functional::Reshape(input, DimVector{1, 1});
  if (input.dim() == 1) return functional::Unsqueeze(input, 0);
  return input;
}

Tensor Atleast3d(const Tensor& input) {
  OpScope scope("atleast_3d");
  if (input.dim() == 0) return functional::Reshape(input, DimVector{1, 1, 1});
  if (input.dim() == 1) return functional::Unsqueeze(functional::Unsqueeze(input, 0), -1);
  if (input.dim() == 2) return functional::Unsqueeze(input, -1);
  return input;
}

std::vector<Tensor> BroadcastTensors(const std::vector<Tensor>& tensors) {
  OpScope scope("broadcast_tensors");
  DimVector shape;
  for (const Tensor& t : tensors) shape = BroadcastShapes(shape, t.sizes());
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(functional::Expand(t, shape));
  return out;
}

std::vector<Tensor> Meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  OpScope scope("meshgrid");
  OF_CHECK(!tensors.empty()) << "Expected at least one tensor";
  OF_CHECK(indexing == "ij" || indexing == "xy")
      << "indexing must be one of \"xy\" or \"ij\", but received: " << indexing;
  for (const Tensor& t : tensors) {
    OF_CHECK(t.dim() <= 1) << "Expected 0D or 1D tensor in the tensor list but got: "
                           << ShapeStr(t.sizes());
    OF_CHECK(t.dtype() == tensors[0].dtype())
        << "expects all tensors to have the same dtype";
    CheckSameDevice(tensors[0], t);
  }
  const int n = tensors.size();
  // 'xy' (Cartesian) indexing swaps the roles of the first two inputs in the output's dims.
  const bool swap = indexing == "xy" && n >= 2;
  auto pos = [&](int i) { return swap && i < 2 ? 1 - i : i; };
  DimVector shape(n);
  for (int i = 0; i < n; ++i) shape[pos(i)] = tensors[i].numel();
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i) {
    DimVector view(n, 1);
    view[pos(i)] = tensors[i].numel();
    out.push_back(functional::Expand(functional::Reshape(tensors[i], view), shape));
  }
  return out;
}

namespace {

// Python's slice normalisation of (start, stop, step) over a dim of size n: the first index, the
// number of elements and the step.
void NormalizeSlice(int64_t start, int64_t stop, int64_t step, int64_t n, int64_t* first, int64_t* len) {
  auto adjust = [&](int64_t v) {
    if (v < 0) {
      v += n;
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= n) {
      v = step < 0 ? n - 1 : n;
    }
    return v;
  };
  start = adjust(start);
  stop = adjust(stop);
  if (step > 0) {
    *len = start < stop ? (stop - start - 1) / step + 1 : 0;
  } else {
    *len = stop < start ? (start - stop - 1) / (-step) + 1 : 0;
  }
  *first = start;
}

// Note [Raw slice lists]: _C.slice / _C.slice_update take upstream OneFlow's normalised lists
// (flow.slice / flow.slice_update in python/oneflow/_shape.py normalise a slice_tup_list to them):
// one (start, stop, step) per dim with 0 <= start <= stop and step > 0; a stop past the dim's end
// is clipped. The checks, their order and words are upstream's (its exceptions tests assert them).
void CheckSliceArgs(const Tensor& input, const DimVector& start, const DimVector& stop, const DimVector& step) {
  const size_t n = std::min({start.size(), stop.size(), step.size()});
  for (size_t i = 0; i < n; ++i) {
    OF_CHECK(step[i] > 0) << "The step list elements must be greater than 0, but got " << step[i] << " at index " << i;
    OF_CHECK(start[i] >= 0) << "The start list elements must be greater than or equal to 0, but got " << start[i]
                            << " at index " << i;
    OF_CHECK(stop[i] >= 0) << "The stop list elements must be greater than or equal to 0, but got " << stop[i]
                           << " at index " << i;
    OF_CHECK(start[i] <= stop[i]) << "The element in start list must be less than or equal to the element in stop "
                                     "list at index "
                                  << i << ", but got " << start[i] << " and " << stop[i];
  }
}

void CheckSliceRank(const Tensor& input, const DimVector& start, const DimVector& stop, const DimVector& step) {
  OF_CHECK(start.size() == input.dim() && stop.size() == input.dim() && step.size() == input.dim())
      << "The size of start, stop and step lists must be equal to the dimension of the input tensor ("
      << input.dim() << "), but got " << start.size() << ", " << stop.size() << " and " << step.size();
}

// input[start:stop:step] per dim as a view with positive steps; dims with a negative step are
// reported in `flip` (their view runs forwards over the same elements).
Tensor SliceForward(const Tensor& input, const DimVector& start, const DimVector& stop, const DimVector& step,
                    DimVector* flip) {
  Tensor t = input;
  for (int d = 0; d < input.dim(); ++d) {
    int64_t first, len;
    NormalizeSlice(start[d], stop[d], step[d], input.sizes()[d], &first, &len);
    const int64_t a = step[d] > 0 ? step[d] : -step[d];
    if (len == 0) {
      t = functional::SliceView(t, d, 0, 0, 1);
      continue;
    }
    const int64_t lo = step[d] > 0 ? first : first - (len - 1) * a;
    t = functional::SliceView(t, d, lo, lo + (len - 1) * a + 1, a);
    if (step[d] < 0) flip->push_back(d);
  }
  return t;
}

}  // namespace

Tensor Slice(const Tensor& input, const DimVector& start, const DimVector& stop, const DimVector& step) {
  OpScope scope("slice");
  CheckSliceArgs(input, start, stop, step);  // Note [Raw slice lists]
  CheckSliceRank(input, start, stop, step);
  DimVector flip;  // stays empty: the steps are positive
  return SliceForward(input, start, stop, step, &flip);
}

Tensor SliceUpdate(const Tensor& input, const Tensor& update, const DimVector& start, const DimVector& stop,
                   const DimVector& step) {
  OpScope scope("slice_update");
  CheckSliceArgs(input, start, stop, step);  // Note [Raw slice lists]
  // The slice's size per listed dim; update must have it, or broadcast to it (aligned at the end).
  const size_t n = std::min({start.size(), stop.size(), step.size()});
  DimVector lens(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t end = i < static_cast<size_t>(input.dim()) ? std::min(stop[i], input.size(i)) : stop[i];
    lens[i] = end > start[i] ? (end - start[i] + step[i] - 1) / step[i] : 0;
  }
  OF_CHECK(update.dim() <= static_cast<int64_t>(n))
      << "The update of shape " << ShapeStr(update.sizes()) << " has more dims than the slice " << ShapeStr(lens);
  for (int j = 1; j <= update.dim(); ++j) {
    const int64_t u = update.size(update.dim() - j), v = lens[n - j];
    OF_CHECK(u == v || u == 1) << "The size of slice tuple must be equal to the size of value tensor at dimension "
                               << n - j << ", but got " << v << " and " << u << " (the slice "
                               << ShapeStr(lens) << ", the update " << ShapeStr(update.sizes()) << ")";
  }
  OF_CHECK_TYPE(update.dtype() == input.dtype()) << "Tensors ref and value must have same type, got "
                                                 << DTypeName(input.dtype()) << " and " << DTypeName(update.dtype());
  CheckSliceRank(input, start, stop, step);
  DimVector flip;  // stays empty: the steps are positive
  Tensor view = SliceForward(input, start, stop, step, &flip);
  CopyFrom_(view, update);
  return input;
}

}  // namespace oneflow::functional
