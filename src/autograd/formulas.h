// Helpers for the backward formulas of the op table (like PyTorch's FunctionsManual): each is
// written with differentiable table ops, so gradients of gradients work.
#pragma once
#include <array>
#include <optional>
#include <tuple>

#include "autograd/functional.h"
#include "decl/add.h"
#include "decl/div.h"
#include "decl/mul.h"
#include "decl/neg.h"
#include "decl/sub.h"

namespace oneflow::functional {

// Arithmetic spelled as operators inside formulas. A double becomes a Python-number-like 0-d
// tensor, so it never changes the other operand's dtype.
inline Tensor S(double v) { return WrappedNumber(Scalar(v)); }
inline Tensor operator+(const Tensor& a, const Tensor& b) { return functional::Add(a, b, Scalar(1)); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return functional::Sub(a, b, Scalar(1)); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return functional::Mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return functional::Div(a, b, std::nullopt); }
inline Tensor operator-(const Tensor& a) { return functional::Neg(a); }
inline Tensor operator+(const Tensor& a, double b) { return a + S(b); }
inline Tensor operator-(const Tensor& a, double b) { return a - S(b); }
inline Tensor operator*(const Tensor& a, double b) { return a * S(b); }
inline Tensor operator/(const Tensor& a, double b) { return a / S(b); }
inline Tensor operator-(double a, const Tensor& b) { return S(a) - b; }

// Output K of a joint formula ("input, weight: F(...)" in the table): F returns a tuple or vector.
template <size_t K, typename V> Tensor JointGrad(const V& v) {
  if constexpr (requires { v.size(); }) return v[K]; else return std::get<K>(v);
}

// An optional single dim as the optional dim list the reduction helpers take.
inline std::optional<DimVector> Dims(const std::optional<int64_t>& dim) {
  if (!dim) return std::nullopt;
  return DimVector{*dim};
}

Tensor ZerosFor(const Tensor& grad);                  // zeros like grad, outside the graph
Tensor Masked(const Tensor& grad, const Tensor& mask);  // grad where mask, else 0
Tensor Scaled(const Tensor& grad, const Scalar& alpha);
// Sums g over broadcast dims down to `sizes` (the inverse of expand).
Tensor SumTo(const Tensor& g, const DimVector& sizes);

Tensor PowGradBase(const Tensor& grad, const Tensor& x, const Tensor& e);
Tensor PowGradExponent(const Tensor& grad, const Tensor& x, const Tensor& e, const Tensor& result);
Tensor MaxMinGrad(const Tensor& grad, const Tensor& x, const Tensor& y, bool is_max, bool for_x);
// fmod's gradient w.r.t. the divisor: -grad * trunc(x / y).
Tensor TruncQuotientGrad(const Tensor& grad, const Tensor& x, const Tensor& y);
Tensor Atan2Grad(const Tensor& grad, const Tensor& x, const Tensor& y, bool for_x);

// Reductions: the gradient expanded back over the reduced dims (dim: none = all).
Tensor ReduceGrad(const Tensor& grad, const DimVector& sizes, const std::optional<DimVector>& dim, bool keepdim);
Tensor MeanGrad(const Tensor& grad, const DimVector& sizes, const std::optional<DimVector>& dim, bool keepdim);
// amax/amin/max()/min(): shared evenly among the elements equal to the extreme.
Tensor ExtremeGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const std::optional<DimVector>& dim,
                   bool keepdim);
Tensor ProdGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const std::optional<int64_t>& dim,
                bool keepdim);
// max(dim)/min(dim): the gradient goes to the position in `indices`.
Tensor IndexReduceGrad(const Tensor& grad, const Tensor& indices, const DimVector& sizes, int64_t dim, bool keepdim);

Tensor MatmulGrad(const Tensor& grad, const Tensor& a, const Tensor& b, int which);
Tensor PermuteGrad(const Tensor& grad, const DimVector& dims);
Tensor NarrowGrad(const Tensor& grad, const DimVector& sizes, int64_t dim, int64_t start, int64_t length);
std::vector<Tensor> CatGrad(const Tensor& grad, const std::vector<DimVector>& sizes, int64_t dim);
std::vector<Tensor> StackGrad(const Tensor& grad, size_t n, int64_t dim);

}  // namespace oneflow::functional

// Family helpers (src/autograd/formulas/<family>.h) are included below, one line each.
#include "autograd/formulas/index.h"
#include "autograd/formulas/math.h"
#include "autograd/formulas/special.h"
#include "autograd/formulas/softmax.h"
#include "autograd/formulas/scan.h"
#include "autograd/formulas/reduce_stats.h"
#include "autograd/formulas/shape.h"
#include "autograd/formulas/matmul.h"
#include "autograd/formulas/linalg.h"
#include "autograd/formulas/conv.h"
#include "autograd/formulas/pool.h"
#include "autograd/formulas/normalization.h"
#include "autograd/formulas/complex.h"
#include "autograd/formulas/fft.h"
#include "autograd/formulas/activation.h"
#include "autograd/formulas/dropout.h"
#include "autograd/formulas/loss.h"
#include "autograd/formulas/embedding.h"
#include "autograd/formulas/resample.h"
#include "autograd/formulas/attention.h"
#include "autograd/formulas/rnn.h"
#include "autograd/formulas/fused.h"
