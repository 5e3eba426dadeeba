// Backward helpers of the shape family (src/ops/table/shape.yaml, shape_copy.yaml).
#pragma once
#include <optional>

#include "autograd/functional.h"

namespace oneflow::functional {

// Gradients of views: zeros shaped like the input with `grad` written through the same view.
Tensor DiagonalGrad(const Tensor& grad, const DimVector& sizes, int64_t offset, int64_t dim1, int64_t dim2);
Tensor SelectGrad(const Tensor& grad, const DimVector& sizes, int64_t dim, int64_t index);
// Overlapping windows (step < size) add up.
Tensor UnfoldGrad(const Tensor& grad, const DimVector& sizes, int64_t dim, int64_t size, int64_t step);
// Storage positions shared by the input's and the view's geometry add up; positions the input
// itself reaches several times share the gradient (PyTorch's as_strided_backward).
Tensor AsStridedGrad(const Tensor& grad, const Tensor& input, const DimVector& size, const DimVector& stride,
                     const std::optional<int64_t>& storage_offset);
Tensor RollGrad(const Tensor& grad, const DimVector& shifts, const std::optional<DimVector>& dims);

}  // namespace oneflow::functional
