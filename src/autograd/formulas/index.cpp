// Backward helpers of the selection / scatter / sort ops (see index.h).
#include "autograd/formulas.h"

#include "core/error.h"
#include "decl/add.h"
#include "decl/argsort.h"
#include "decl/cast.h"
#include "decl/cat.h"
#include "decl/eq.h"
#include "decl/expand.h"
#include "decl/full.h"
#include "decl/gather.h"
#include "decl/index_add.h"
#include "decl/index_fill.h"
#include "decl/index_put.h"
#include "decl/index_select.h"
#include "decl/isnan.h"
#include "decl/logical_and.h"
#include "decl/lt.h"
#include "decl/masked_fill.h"
#include "decl/masked_scatter.h"
#include "decl/masked_select.h"
#include "decl/ones_like.h"
#include "decl/reshape.h"
#include "decl/scatter.h"
#include "decl/scatter_add.h"
#include "decl/scatter_reduce.h"
#include "decl/sum.h"
#include "decl/where.h"
#include "decl/zeros.h"

namespace oneflow::functional {

namespace {
Tensor One() { return WrappedNumber(Scalar(int64_t(1))); }
Tensor Zero() { return WrappedNumber(Scalar(int64_t(0))); }
// zeros at the scattered positions of t, t elsewhere.
Tensor ZeroScattered(const Tensor& t, int64_t dim, const Tensor& index) {
  return functional::Scatter(t, dim, index, Tensor(), Scalar(int64_t(0)), std::nullopt);
}
}  // namespace

Tensor ZerosOfSize(const Tensor& like, const DimVector& sizes) {
  return functional::Zeros(sizes, like.dtype(), like.device(), false);
}

Tensor SumAll(const Tensor& t) { return functional::Sum(t, std::nullopt, false, std::nullopt); }

Tensor MaskedSelectGrad(const Tensor& grad, const DimVector& input_sizes, const Tensor& mask) {
  // Zeros of the broadcast shape with grad at the selected positions; the engine sums the
  // broadcast dims back to the input's shape.
  DimVector shape = BroadcastShapes(input_sizes, mask.sizes());
  return functional::MaskedScatter(ZerosOfSize(grad, shape), mask, grad);
}

Tensor MaskedScatterSourceGrad(const Tensor& grad, const Tensor& mask, const DimVector& source_sizes) {
  Tensor picked = functional::MaskedSelect(grad, mask);  // one per used source element, in order
  const int64_t n = NumelOf(source_sizes);
  const int64_t used = picked.numel();
  if (used < n) picked = functional::Cat({picked, ZerosOfSize(grad, DimVector{n - used})}, 0);
  return functional::Reshape(picked, source_sizes);
}

Tensor GatherGrad(const Tensor& grad, const DimVector& input_sizes, int64_t dim, const Tensor& index) {
  return functional::ScatterAdd(ZerosOfSize(grad, input_sizes), dim, index, grad);
}

Tensor GatherToSize(const Tensor& grad, int64_t dim, const Tensor& index, const DimVector& sizes) {
  Tensor g = functional::Gather(grad, dim, index, false);
  if (g.sizes() == sizes || g.dim() != static_cast<int>(sizes.size())) return g;
  // src may be larger than index in every dim: the elements never read get 0.
  DimVector cur = g.sizes();
  for (int d = 0; d < g.dim(); ++d) {
    if (cur[d] == sizes[d]) continue;
    const int64_t len = cur[d];
    cur[d] = sizes[d];
    g = NarrowGrad(g, cur, d, 0, len);
  }
  return g;
}

Tensor ScatterGradInput(const Tensor& grad, const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                        const std::optional<Scalar>& value, const std::optional<std::string>& reduce,
                        const Tensor& result) {
  if (!reduce) return ZeroScattered(grad, dim, index);
  if (*reduce == "add") return grad;
  // multiply is scatter_reduce(prod, include_self) with a scalar filled to the index's shape.
  Tensor s = src;
  if (!s.defined() || s.is_wrapped_number())
    s = ::oneflow::Full(index.sizes(), value ? *value : ItemOf(src), grad.dtype(), grad.device(), false);
  return ScatterReduceGrad(grad, input, dim, index, s, "prod", true, result, true);
}

Tensor ScatterGradSrc(const Tensor& grad, const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::optional<std::string>& reduce, const Tensor& result) {
  if (!reduce || *reduce == "add") return GatherToSize(grad, dim, index, src.sizes());
  return ScatterReduceGrad(grad, input, dim, index, src, "prod", true, result, false);
}

Tensor ScatterReduceGrad(const Tensor& grad, const Tensor& input, int64_t dim, const Tensor& index,
                         const Tensor& src, const std::string& reduce, bool include_self, const Tensor& result,
                         bool for_input) {
  Tensor gs, gr;  // self's and src's gradients (gr has index's shape)
  if (reduce == "sum") {
    gs = grad;
    if (!for_input) gr = functional::Gather(grad, dim, index, false);
  } else if (reduce == "mean") {
    Tensor n = include_self ? functional::OnesLike(grad, std::nullopt, std::nullopt, false) : ZerosOfSize(grad, grad.sizes());
    n = functional::ScatterAdd(n, dim, index, functional::OnesLike(src, grad.dtype(), std::nullopt, false));
    n = functional::MaskedFill(n, functional::Eq(n, Zero()), One());
    gs = grad / n;
    if (!for_input) gr = functional::Gather(gs, dim, index, false);
  } else if (reduce == "prod") {
    // Zeros need care (PyTorch's formula): self's gradient is the product of everything else
    // scattered there; a src element that is the only zero at its target gets the product of
    // the others, and the gradient w.r.t. a src element among several zeros is 0.
    if (for_input) {
      Tensor masked_self = functional::MaskedFill(input, functional::Eq(input, Zero()), One());
      Tensor masked_result = functional::ScatterReduce(masked_self, dim, index, src, "prod", include_self);
      gs = grad * masked_result / masked_self;
    } else {
      Tensor src_zero = functional::Eq(src, Zero());
      Tensor zeros_at = functional::ScatterAdd(ZerosOfSize(grad, grad.sizes()), dim, index,
                                               functional::Cast(src_zero, grad.dtype()));
      Tensor num_zeros = functional::Gather(zeros_at, dim, index, false);
      Tensor single = functional::LogicalAnd(src_zero, functional::Eq(num_zeros, One()));
      Tensor masked_src = functional::MaskedFill(src, single, One());
      Tensor masked_src_result = functional::ScatterReduce(input, dim, index, masked_src, "prod", include_self);
      Tensor g1 = functional::Gather(grad * masked_src_result, dim, index, false);
      Tensor g2 = functional::Gather(grad * result, dim, index, false) /
                  functional::MaskedFill(src, src_zero, One());
      gr = functional::Where(single, g1, g2);
    }
  } else {  // amax / amin: shared evenly among the elements equal to the result
    Tensor value = functional::Gather(result, dim, index, false);
    Tensor self_is = functional::Cast(functional::Eq(input, result), grad.dtype());
    Tensor src_is = functional::Cast(functional::Eq(src, value), grad.dtype());
    if (!include_self) self_is = ZeroScattered(self_is, dim, index);
    Tensor count = functional::ScatterAdd(self_is, dim, index, src_is);
    Tensor share = grad / functional::MaskedFill(count, functional::Eq(count, Zero()), One());
    gs = self_is * share;
    if (!for_input) gr = src_is * functional::Gather(share, dim, index, false);
  }
  if (for_input) return include_self || reduce == "amax" || reduce == "amin" ? gs : ZeroScattered(gs, dim, index);
  if (gr.sizes() != src.sizes() && gr.dim() == src.dim()) {
    DimVector cur = gr.sizes();
    for (int d = 0; d < gr.dim(); ++d) {
      if (cur[d] == src.sizes()[d]) continue;
      const int64_t len = cur[d];
      cur[d] = src.sizes()[d];
      gr = NarrowGrad(gr, cur, d, 0, len);
    }
  }
  return gr;
}

Tensor TakeGrad(const Tensor& grad, const DimVector& input_sizes, const Tensor& index) {
  Tensor flat = ZerosOfSize(grad, DimVector{NumelOf(input_sizes)});
  Tensor g = functional::IndexPut(flat, {functional::Reshape(index, DimVector{-1})},
                                  functional::Reshape(grad, DimVector{-1}), true);
  return functional::Reshape(g, input_sizes);
}

Tensor TakeAlongDimGrad(const Tensor& grad, const DimVector& input_sizes, const Tensor& indices,
                        const std::optional<int64_t>& dim) {
  if (!dim) {
    Tensor flat = GatherGrad(functional::Reshape(grad, DimVector{-1}), DimVector{NumelOf(input_sizes)}, 0,
                             functional::Reshape(indices, DimVector{-1}));
    return functional::Reshape(flat, input_sizes);
  }
  if (input_sizes.empty()) return GatherGrad(grad, input_sizes, *dim, indices);
  // The forward gathered from the input broadcast to grad's shape (but for `dim`); the engine
  // sums that broadcast back to the input's shape.
  const int d = WrapDim(*dim, input_sizes.size());
  DimVector shape = grad.sizes();
  shape[d] = input_sizes[d];
  Tensor idx = functional::Expand(indices, grad.sizes());
  // Negative indices counted from the end in the forward.
  Tensor wrapped = functional::Add(idx, WrappedNumber(Scalar(input_sizes[d])), Scalar(int64_t(1)));
  idx = functional::Where(functional::Lt(idx, Zero()), wrapped, idx);
  return GatherGrad(grad, shape, d, idx);
}

Tensor IndexSelectGrad(const Tensor& grad, const DimVector& input_sizes, int64_t dim, const Tensor& index) {
  Tensor g = grad;
  if (input_sizes.empty()) return functional::Reshape(g, input_sizes);
  return functional::IndexAdd(ZerosOfSize(grad, input_sizes), dim, functional::Reshape(index, DimVector{-1}),
                              g.dim() == 0 ? functional::Reshape(g, DimVector{1}) : g, Scalar(int64_t(1)));
}

Tensor IndexSourceGrad(const Tensor& grad, int64_t dim, const Tensor& index, const DimVector& source_sizes,
                       const Scalar& alpha) {
  Tensor g = grad.dim() == 0 ? grad : functional::IndexSelect(grad, dim, index);
  if (alpha.is_float() || alpha.ToInt() != 1) g = Scaled(g, alpha);
  return functional::Reshape(g, source_sizes);
}

Tensor IndexFillValueGrad(const Tensor& grad, int64_t dim, const Tensor& index) {
  Tensor filled = functional::IndexFill(ZerosOfSize(grad, grad.sizes()), dim, index, One());
  return SumAll(grad * filled);
}

Tensor IndexPutGradInput(const Tensor& grad, const std::vector<Tensor>& indices, bool accumulate) {
  if (accumulate) return grad;
  return functional::IndexPut(grad, indices, Zero(), false);
}

Tensor SortGrad(const Tensor& grad, const DimVector& input_sizes, int64_t dim, const Tensor& indices) {
  return functional::Scatter(ZerosOfSize(grad, input_sizes), dim, indices, grad, std::nullopt, std::nullopt);
}

Tensor MsortGrad(const Tensor& grad, const Tensor& input) {
  return SortGrad(grad, input.sizes(), 0, functional::Argsort(input, 0, false, true));
}

Tensor MedianGrad(const Tensor& grad, const Tensor& input, const Tensor& values, const Tensor& indices,
                  const std::optional<int64_t>& dim, bool keepdim) {
  if (dim) return IndexReduceGrad(grad, indices, input.sizes(), *dim, keepdim);
  Tensor mask = functional::Where(functional::Isnan(values), functional::Isnan(input), functional::Eq(input, values));
  Tensor count = SumAll(mask);
  return Masked(grad / count, mask);
}

}  // namespace oneflow::functional
