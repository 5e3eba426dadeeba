// Backward helpers of the selection / scatter / sort ops (src/ops/table/index.yaml, sort.yaml),
// written with differentiable table ops so that gradients of gradients work.
#pragma once
#include <optional>
#include <string>

#include "autograd/functional.h"

namespace oneflow::functional {

Tensor ZerosOfSize(const Tensor& like, const DimVector& sizes);  // zeros with like's dtype/device
Tensor SumAll(const Tensor& t);                                    // 0-d sum

// masked_select: grad scattered back to the selected positions of the broadcast shape.
Tensor MaskedSelectGrad(const Tensor& grad, const DimVector& input_sizes, const Tensor& mask);
// masked_scatter: source element k received the k-th selected position's gradient.
Tensor MaskedScatterSourceGrad(const Tensor& grad, const Tensor& mask, const DimVector& source_sizes);

// gather: the gradient added back at the gathered positions.
Tensor GatherGrad(const Tensor& grad, const DimVector& input_sizes, int64_t dim, const Tensor& index);
// gather(grad, dim, index) zero-padded to `sizes` (src may be larger than index in scatter ops).
Tensor GatherToSize(const Tensor& grad, int64_t dim, const Tensor& index, const DimVector& sizes);
// scatter (reduce none / add / multiply) for its input and for src.
Tensor ScatterGradInput(const Tensor& grad, const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                        const std::optional<Scalar>& value, const std::optional<std::string>& reduce,
                        const Tensor& result);
Tensor ScatterGradSrc(const Tensor& grad, const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::optional<std::string>& reduce, const Tensor& result);
// scatter_reduce: PyTorch's formulas per reduction (for_input: self's gradient, else src's).
Tensor ScatterReduceGrad(const Tensor& grad, const Tensor& input, int64_t dim, const Tensor& index,
                         const Tensor& src, const std::string& reduce, bool include_self, const Tensor& result,
                         bool for_input);

Tensor TakeGrad(const Tensor& grad, const DimVector& input_sizes, const Tensor& index);
Tensor TakeAlongDimGrad(const Tensor& grad, const DimVector& input_sizes, const Tensor& indices,
                        const std::optional<int64_t>& dim);
Tensor IndexSelectGrad(const Tensor& grad, const DimVector& input_sizes, int64_t dim, const Tensor& index);
// index_add (alpha) / index_copy (alpha 1): the source's slices read back from grad.
Tensor IndexSourceGrad(const Tensor& grad, int64_t dim, const Tensor& index, const DimVector& source_sizes,
                       const Scalar& alpha);
// index_fill's value: the sum of grad over the filled slices (each slice once).
Tensor IndexFillValueGrad(const Tensor& grad, int64_t dim, const Tensor& index);
// index_put: positions overwritten (not accumulated) get no gradient.
Tensor IndexPutGradInput(const Tensor& grad, const std::vector<Tensor>& indices, bool accumulate);

// sort / topk: the gradient scattered back through the indices.
Tensor SortGrad(const Tensor& grad, const DimVector& input_sizes, int64_t dim, const Tensor& indices);
Tensor MsortGrad(const Tensor& grad, const Tensor& input);
// median / nanmedian: with a dim, to the selected index; over everything, shared evenly among
// the elements equal to the median (all NaNs when it is NaN), as PyTorch.
Tensor MedianGrad(const Tensor& grad, const Tensor& input, const Tensor& values, const Tensor& indices,
                  const std::optional<int64_t>& dim, bool keepdim);

}  // namespace oneflow::functional
