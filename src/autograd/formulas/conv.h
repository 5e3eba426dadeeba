// Backward helpers of the convolution family (src/ops/table/conv.yaml): each is a table op call,
// so gradients of gradients work.
#pragma once
#include "autograd/functional.h"

namespace oneflow::functional {

// convNd by the weight's rank (1-3 spatial dims), cut to the spatial sizes of out_sizes: the
// adjoint of a transposed convolution with output_padding, whose last input rows no window
// reaches, has more positions than the transposed convolution's input had.
Tensor ConvNdTo(const Tensor& x, const Tensor& w, const DimVector& out_sizes, const DimVector& stride,
                const DimVector& padding, const DimVector& dilation, int64_t groups);
// d conv(x, w) / dx: the transposed convolution of grad, sized back to the input (output_padding
// restores the rows a strided convolution dropped).
Tensor ConvInputGrad(const Tensor& grad, const Tensor& w, const DimVector& input_sizes, const DimVector& stride,
                     const DimVector& padding, const DimVector& dilation, int64_t groups);
// Sum over every dim but the channel dim (weight_rank tells batched from unbatched).
Tensor ConvBiasGrad(const Tensor& grad, int64_t weight_rank);

}  // namespace oneflow::functional
