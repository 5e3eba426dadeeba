// Backward helpers of the pointwise math family (src/ops/table/math.yaml, clamp, div).
#pragma once
#include <optional>
#include <string>

#include "autograd/functional.h"

namespace oneflow::functional {

// clamp with optional (undefined = None) tensor or number bounds, as PyTorch's clamp_backward:
// the input's gradient flows where min <= x <= max; a bound's where it was the active one
// (with min > max, max wins everywhere).
Tensor ClampGrad(const Tensor& grad, const Tensor& x, const Tensor& min, const Tensor& max);
Tensor ClampBoundGrad(const Tensor& grad, const Tensor& x, const Tensor& min, const Tensor& max, bool for_min);
// div: a rounding mode makes the result piecewise constant (zero gradient).
Tensor DivGrad(const Tensor& grad, const Tensor& x, const Tensor& y,
               const std::optional<std::string>& rounding_mode, bool for_x);
// d/dx of xlogy(x, y) (log1p: xlog1py): log(y) (log1p(y)), 0 where x = 0 and y is at or beyond
// the pole, as PyTorch's formula.
Tensor XlogyGrad(const Tensor& grad, const Tensor& x, const Tensor& y, bool log1p);
Tensor SincGrad(const Tensor& grad, const Tensor& x);
// grad where x is finite; on complex x each part where that part is finite.
Tensor NanToNumGrad(const Tensor& grad, const Tensor& x);
Tensor LogitGrad(const Tensor& grad, const Tensor& x, const std::optional<double>& eps);
// float_power's operand t as the power computed it: complex128 when t or other is complex, else
// float64 (so the backward's pow formulas see the complex values).
Tensor FloatPowerOperand(const Tensor& t, const Tensor& other);

}  // namespace oneflow::functional
