// Backward helpers of the statistics reductions and norms (src/ops/table/reduce_stats.yaml,
// norm.yaml). dim: none or empty = every dim.
#pragma once
#include <optional>

#include "autograd/functional.h"

namespace oneflow::functional {

// var: 2 (x - mean) / (N - correction) * grad; std: var's with grad / (2 std) (0 where std = 0).
Tensor VarGrad(const Tensor& grad, const Tensor& x, const std::optional<DimVector>& dim,
               std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim);
Tensor StdGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const std::optional<DimVector>& dim,
               std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim);
// grad * exp(x - logsumexp(x)).
Tensor LogsumexpGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const DimVector& dim, bool keepdim);
// grad / (number of non-NaN elements), 0 at the NaNs.
Tensor NanmeanGrad(const Tensor& grad, const Tensor& x, const std::optional<DimVector>& dim, bool keepdim);
// PyTorch's linalg_vector_norm_backward cases: p = 0, 1, 2, inf, p < 1, p < 2, p >= 2.
Tensor VectorNormGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const Scalar& ord,
                      const std::optional<DimVector>& dim, bool keepdim);
// Orders +-1 / +-inf: the extreme's gradient (shared among ties) times sign(A).
Tensor MatrixNormGrad(const Tensor& grad, const Tensor& a, const Tensor& result, const Scalar& ord,
                      const std::optional<DimVector>& dim, bool keepdim);

}  // namespace oneflow::functional
