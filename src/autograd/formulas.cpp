#include "autograd/formulas.h"

#include <algorithm>
#include <numeric>

#include "autograd/special_nodes.h"
#include "core/error.h"
#include "decl/arange.h"
#include "decl/cast.h"
#include "decl/eq.h"
#include "decl/expand.h"
#include "decl/ge.h"
#include "decl/gt.h"
#include "decl/imag.h"
#include "decl/log.h"
#include "decl/logical_and.h"
#include "decl/logical_not.h"
#include "decl/lt.h"
#include "decl/matmul.h"
#include "decl/mm.h"
#include "decl/narrow.h"
#include "decl/ne.h"
#include "decl/permute.h"
#include "decl/pow.h"
#include "decl/prod.h"
#include "decl/real.h"
#include "decl/reshape.h"
#include "decl/select.h"
#include "decl/squeeze.h"
#include "decl/sum.h"
#include "decl/transpose.h"
#include "decl/trunc.h"
#include "decl/unsqueeze.h"
#include "decl/where.h"
#include "decl/zeros.h"
#include "decl/zeros_like.h"

namespace oneflow::functional {

// (through the functional entry: a traced backward records it, Note [Backward nodes])
Tensor ZerosFor(const Tensor& grad) { return functional::ZerosLike(grad, std::nullopt, std::nullopt, false); }

Tensor Masked(const Tensor& grad, const Tensor& mask) { return functional::Where(mask, grad, S(0)); }

Tensor Scaled(const Tensor& grad, const Scalar& alpha) {
  if ((alpha.is_int() || alpha.is_bool()) && alpha.ToInt() == 1) return grad;
  // A complex factor enters conjugated (the gradient is the conjugate Wirtinger derivative).
  if (alpha.is_complex()) return grad * WrappedNumber(Scalar(std::conj(alpha.ToComplex())));
  return grad * WrappedNumber(alpha);
}

Tensor SumTo(const Tensor& g, const DimVector& sizes) {
  if (g.sizes() == sizes) return g;
  const int lead = g.dim() - static_cast<int>(sizes.size());
  DimVector dims;
  for (int d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] == 1 && g.sizes()[lead + d] != 1) dims.push_back(lead + d);
  Tensor r = dims.empty() ? g : functional::Sum(g, dims, true, std::nullopt);
  return functional::Reshape(r, sizes);
}

Tensor PowGradBase(const Tensor& grad, const Tensor& x, const Tensor& e) {
  // A Python-number exponent stays one in double precision: `e - 1.0` of two wrapped numbers
  // would be computed in the default float dtype (x.pow(1/3) lost float64 digits).
  Tensor em1 = e - 1.0;
  if (e.is_wrapped_number()) {
    const Scalar s = ItemOf(e);
    // (a complex one -- float_power's operand cast to complex128 -- keeps the tensor arithmetic)
    if (s.is_float()) em1 = S(s.ToDouble() - 1.0);
    else if (!s.is_complex()) em1 = WrappedNumber(Scalar(s.ToInt() - 1));
  }
  // 0 where the exponent is 0 (x**0 is constant even at x = 0).
  return Masked(grad * MaybeConj(e * functional::Pow(x, em1)), functional::Ne(e, S(0)));
}

Tensor PowGradExponent(const Tensor& grad, const Tensor& x, const Tensor& e, const Tensor& result) {
  // x**e * log(x), with the limit 0 at x = 0 for e >= 0 (a complex e must be real and >= 0
  // there, as PyTorch's pow_backward_exponent).
  if (IsComplex(x.dtype()) || IsComplex(e.dtype())) {
    Tensor real_e = functional::Ge(IsComplex(e.dtype()) ? functional::Real(e) : e, S(0));
    if (IsComplex(e.dtype())) real_e = functional::LogicalAnd(real_e, functional::Eq(functional::Imag(e), S(0)));
    Tensor at_zero = functional::LogicalAnd(functional::Eq(x, S(0)), real_e);
    Tensor xc = functional::Cast(x, result.dtype());
    return Masked(grad * MaybeConj(result * functional::Log(xc)), functional::LogicalNot(at_zero));
  }
  Tensor at_zero = functional::LogicalAnd(functional::Eq(x, S(0)), functional::Ge(e, S(0)));
  return Masked(grad * result * functional::Log(x), functional::LogicalNot(at_zero));
}

Tensor MaxMinGrad(const Tensor& grad, const Tensor& x, const Tensor& y, bool is_max, bool for_x) {
  // Ties split the gradient in half; the losing side gets 0 (with NaNs, neither side loses).
  const Tensor& me = for_x ? x : y;
  const Tensor& them = for_x ? y : x;
  Tensor loses = is_max ? functional::Lt(me, them) : functional::Gt(me, them);
  Tensor g = functional::Where(functional::Eq(x, y), grad * 0.5, grad);
  return functional::Where(loses, S(0), g);
}

namespace {
// Half-precision quotients are formed in float32, as the forward kernels do, before rounding.
Tensor QuotientOperand(const Tensor& t, const Tensor& grad) {
  DType d = grad.dtype() == DType::kFloat16 || grad.dtype() == DType::kBFloat16 ? DType::kFloat32 : grad.dtype();
  return t.dtype() == d ? t : functional::Cast(t, d);
}
}  // namespace

Tensor TruncQuotientGrad(const Tensor& grad, const Tensor& x, const Tensor& y) {
  Tensor q = functional::Trunc(QuotientOperand(x, grad) / QuotientOperand(y, grad));
  return -(grad * q);
}

Tensor Atan2Grad(const Tensor& grad, const Tensor& x, const Tensor& y, bool for_x) {
  // Bool/int operands (atan2 promotes them) are differentiated as float values.
  Tensor xf = x.dtype() == grad.dtype() ? x : functional::Cast(x, grad.dtype());
  Tensor yf = y.dtype() == grad.dtype() ? y : functional::Cast(y, grad.dtype());
  Tensor denom = xf * xf + yf * yf;
  return for_x ? grad * yf / denom : -(grad * xf) / denom;
}

namespace {

// The reduced dims, ascending, wrapped (none or empty = all dims).
DimVector ReducedDims(const std::optional<DimVector>& dim, int ndim) {
  DimVector r;
  if (!dim || dim->empty()) {
    for (int d = 0; d < ndim; ++d) r.push_back(d);
  } else {
    for (int64_t d : *dim) r.push_back(WrapDim(d, ndim));
    std::sort(r.begin(), r.end());
  }
  return r;
}

// A reduced tensor (grad, result) broadcast back to the input's shape.
Tensor Unreduce(const Tensor& t, const DimVector& sizes, const std::optional<DimVector>& dim, bool keepdim) {
  Tensor g = t;
  if (!keepdim && !sizes.empty())
    for (int64_t d : ReducedDims(dim, sizes.size())) g = functional::Unsqueeze(g, d);
  return functional::Expand(g, sizes);
}

}  // namespace

Tensor ReduceGrad(const Tensor& grad, const DimVector& sizes, const std::optional<DimVector>& dim, bool keepdim) {
  return Unreduce(grad, sizes, dim, keepdim);
}

Tensor MeanGrad(const Tensor& grad, const DimVector& sizes, const std::optional<DimVector>& dim, bool keepdim) {
  int64_t count = 1;
  if (!sizes.empty())
    for (int64_t d : ReducedDims(dim, sizes.size())) count *= sizes[d];
  return Unreduce(grad, sizes, dim, keepdim) / static_cast<double>(count);
}

Tensor ExtremeGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const std::optional<DimVector>& dim,
                   bool keepdim) {
  Tensor mask = functional::Eq(x, Unreduce(result, x.sizes(), dim, keepdim));
  Tensor count = functional::Sum(mask, ReducedDims(dim, x.dim()), true, std::nullopt);
  Tensor share = Unreduce(grad, x.sizes(), dim, keepdim) / functional::Expand(count, x.sizes());
  return Masked(share, mask);
}

Tensor ProdGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const std::optional<int64_t>& dim,
                bool keepdim) {
  std::optional<DimVector> dims;
  if (dim) dims = DimVector{*dim};
  Tensor g = Unreduce(grad, x.sizes(), dims, keepdim);
  Tensor zero = functional::Eq(x, S(0));
  // Without zeros: prod / x. With exactly one zero in the slice: that element gets the product
  // of the others; every other element (and all of them with two zeros or more) gets 0.
  Tensor nzeros = functional::Sum(zero, ReducedDims(dims, x.dim()), true, std::nullopt);
  Tensor others = functional::Prod(functional::Where(zero, S(1), x), dim, true, std::nullopt);
  if (!dim) others = functional::Reshape(others, DimVector(x.dim(), 1));
  Tensor one_zero = functional::Expand(functional::Eq(nzeros, S(1)), x.sizes());
  // Complex inputs: the derivative factors are conjugated (formulas/complex.h).
  Tensor at_zero = Masked(g * MaybeConj(functional::Expand(others, x.sizes())), one_zero);
  Tensor safe_x = functional::Where(zero, S(1), x);
  return functional::Where(zero, at_zero,
                           g * MaybeConj(Unreduce(result, x.sizes(), dims, keepdim) / safe_x));
}

Tensor IndexReduceGrad(const Tensor& grad, const Tensor& indices, const DimVector& sizes, int64_t dim, bool keepdim) {
  const int64_t d = sizes.empty() ? 0 : WrapDim(dim, sizes.size());
  if (sizes.empty()) return grad;
  Tensor g = keepdim ? grad : functional::Unsqueeze(grad, d);
  Tensor idx = keepdim ? indices : functional::Unsqueeze(indices, d);
  DimVector pos_shape(sizes.size(), 1);
  pos_shape[d] = sizes[d];
  Tensor pos = functional::Reshape(functional::Arange(Scalar(int64_t(0)), Scalar(sizes[d]), Scalar(int64_t(1)), DType::kInt64,
                                           grad.device(), false),
                       pos_shape);
  return Masked(functional::Expand(g, sizes), functional::Eq(pos, idx));
}

Tensor MatmulGrad(const Tensor& grad, const Tensor& a0, const Tensor& b0, int which) {
  // Complex operands enter conjugated (formulas/complex.h): d(a @ b)/da contracts with conj(b).
  const Tensor a = MaybeConj(a0), b = MaybeConj(b0);
  const int da = a.dim(), db = b.dim();
  if (da == 1 && db == 1) return grad * (which == 0 ? b : a);
  if (db == 1) {  // [..., n, k] @ [k] -> [..., n]
    if (which == 0) return functional::Unsqueeze(grad, -1) * b;
    return functional::Squeeze(functional::Matmul(functional::Transpose(a, -2, -1), functional::Unsqueeze(grad, -1)), DimVector{-1});
  }
  if (da == 1) {  // [k] @ [..., k, m] -> [..., m]
    if (which == 0) return functional::Squeeze(functional::Matmul(b, functional::Unsqueeze(grad, -1)), DimVector{-1});
    return functional::Unsqueeze(a, -1) * functional::Unsqueeze(grad, -2);
  }
  if (which == 0) return functional::Matmul(grad, functional::Transpose(b, -2, -1));
  // Note [Weight-gradient layout]: nn.Linear multiplies by weight.t(), a column-major view of
  // the [out, in] weight. Its gradient a^T @ grad would come out [in, out] row-major, and t()'s
  // backward would hand the weight a transposed view, which AccumulateGrad or a graph's update
  // node must copy to make .grad contiguous. For a column-major `other` the product is computed
  // the other way round, (grad^T @ a)^T: the same values, and after t()'s backward a contiguous
  // [out, in] gradient straight from the GEMM (a traced graph's t(transpose(x)) simplifies to x).
  const bool column_major = db == 2 && b0.sizes()[0] > 1 && b0.sizes()[1] > 1 && b0.strides()[0] == 1 &&
                            b0.strides()[1] == b0.sizes()[0];
  if (da >= 3 && db == 2) {
    // [..., m, k] @ [k, n]: the weight's gradient is one GEMM over the folded rows, not a batch
    // of products summed afterwards.
    const int64_t k = a.sizes()[da - 1], n = b.sizes()[1];
    const int64_t r = NumelOf(DimVector(a.sizes().begin(), a.sizes().end() - 1));
    const Tensor a2 = functional::Reshape(a, DimVector{r, k}), g2 = functional::Reshape(grad, DimVector{r, n});
    if (column_major) return functional::Transpose(functional::Mm(functional::Transpose(g2, 0, 1), a2), 0, 1);
    return functional::Mm(functional::Transpose(a2, 0, 1), g2);
  }
  if (column_major && da == 2)
    return functional::Transpose(functional::Matmul(functional::Transpose(grad, 0, 1), a), 0, 1);
  return functional::Matmul(functional::Transpose(a, -2, -1), grad);
}

Tensor PermuteGrad(const Tensor& grad, const DimVector& dims) {
  DimVector inv(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inv[WrapDim(dims[i], dims.size())] = i;
  return functional::Permute(grad, inv);
}

Tensor NarrowGrad(const Tensor& grad, const DimVector& sizes, int64_t dim, int64_t start, int64_t length) {
  Tensor buf = functional::Zeros(sizes, grad.dtype(), grad.device(), false);
  const int64_t d = WrapDim(dim, sizes.size());
  CopyFrom_(functional::Narrow(buf, d, start < 0 ? start + sizes[d] : start, length), grad);
  return buf;
}

std::vector<Tensor> CatGrad(const Tensor& grad, const std::vector<DimVector>& sizes, int64_t dim) {
  std::vector<Tensor> out;
  const int64_t d = WrapDim(dim, grad.dim());
  int64_t pos = 0;
  for (const DimVector& s : sizes) {
    if (s.size() == 1 && s[0] == 0 && grad.dim() > 1) {  // legacy empty 1-D input: no slice of grad
      out.push_back(functional::Zeros(s, grad.dtype(), grad.device(), false));
      continue;
    }
    out.push_back(functional::Narrow(grad, d, pos, s[d]));
    pos += s[d];
  }
  return out;
}

std::vector<Tensor> StackGrad(const Tensor& grad, size_t n, int64_t dim) {
  std::vector<Tensor> out;
  const int64_t d = WrapDim(dim, grad.dim());
  for (size_t i = 0; i < n; ++i) out.push_back(functional::Select(grad, d, static_cast<int64_t>(i)));
  return out;
}

}  // namespace oneflow::functional
