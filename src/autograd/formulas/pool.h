// Backward helpers of the pooling family (src/ops/table/pool.yaml): table-op calls with the
// spatial parameters spelled out (one entry per spatial dim) for the internal gradient ops.
#pragma once
#include <optional>

#include "autograd/functional.h"

namespace oneflow::functional {

// Scatter-add of grad into the positions a max pool picked (k spatial dims).
Tensor MaxPoolInputGrad(const Tensor& grad, const Tensor& indices, const Tensor& input, int64_t k);
Tensor AvgPoolInputGrad(const Tensor& grad, const Tensor& input, const DimVector& kernel_size,
                        const std::optional<DimVector>& stride, const DimVector& padding, bool ceil_mode,
                        bool count_include_pad, std::optional<int64_t> divisor_override, int64_t k);
// avg_poolNd by the number of spatial dims (kernel_size.size()).
Tensor AvgPoolNd(const Tensor& x, const DimVector& kernel_size, const DimVector& stride, const DimVector& padding,
                 bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override);
Tensor AdaptiveAvgPoolInputGrad(const Tensor& grad, const Tensor& input, int64_t k);
// adaptive_avg_poolNd of x to the trailing k sizes of out_sizes.
Tensor AdaptiveAvgPoolNd(const Tensor& x, const DimVector& out_sizes, int64_t k);

}  // namespace oneflow::functional
