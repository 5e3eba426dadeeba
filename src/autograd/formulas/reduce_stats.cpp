#include "autograd/formulas/reduce_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/formulas.h"
#include "autograd/formulas/complex.h"
#include "decl/abs.h"
#include "decl/cast.h"
#include "decl/eq.h"
#include "decl/exp.h"
#include "decl/expand.h"
#include "decl/isnan.h"
#include "decl/logical_not.h"
#include "decl/logical_or.h"
#include "decl/mean.h"
#include "decl/ne.h"
#include "decl/pow.h"
#include "decl/sgn.h"
#include "decl/sum.h"
#include "decl/unsqueeze.h"
#include "decl/where.h"
#include "decl/zeros_like.h"

namespace oneflow::functional {

namespace {

DimVector AllOrDims(const std::optional<DimVector>& dim, int ndim) {
  DimVector r;
  if (!dim || dim->empty()) {
    for (int d = 0; d < ndim; ++d) r.push_back(d);
  } else {
    for (int64_t d : *dim) r.push_back(WrapDim(d, ndim));
    std::sort(r.begin(), r.end());
  }
  return r;
}

int64_t CountOf(const DimVector& sizes, const DimVector& dims) {
  int64_t n = 1;
  if (!sizes.empty())
    for (int64_t d : dims) n *= sizes[d];
  return n;
}

Tensor AsDType(const Tensor& t, DType d) { return t.dtype() == d ? t : functional::Cast(t, d); }

}  // namespace

Tensor VarGrad(const Tensor& grad, const Tensor& x, const std::optional<DimVector>& dim,
               std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim) {
  const DimVector dims = AllOrDims(dim, x.dim());
  const double c = correction ? correction->ToDouble() : (!unbiased || *unbiased) ? 1.0 : 0.0;
  // The degrees of freedom are clamped at 0 as in the forward (2/0 = inf, as PyTorch).
  const double dof = std::max(0.0, static_cast<double>(CountOf(x.sizes(), dims)) - c);
  Tensor centered = x - functional::Mean(x, dims, true, std::nullopt);
  if ((!dim || x.dim() == 0) && dof <= 0) {
    // A full reduction without degrees of freedom: NaN where x is its mean, inf elsewhere (a
    // real factor, also for complex x), as PyTorch defines this limit; with dims it keeps the
    // signed infinities of 2 / 0 * (x - mean).
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    return ReduceGrad(grad, x.sizes(), dims, keepdim) *
           functional::Where(functional::Eq(centered, S(0)), S(nan), S(inf));
  }
  return ReduceGrad(grad, x.sizes(), dims, keepdim) * centered * (2.0 / dof);
}

Tensor StdGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const std::optional<DimVector>& dim,
               std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim) {
  Tensor g = Masked(grad / (result * 2.0), functional::Ne(result, S(0)));
  return VarGrad(g, x, dim, unbiased, correction, keepdim);
}

Tensor LogsumexpGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const DimVector& dim, bool keepdim) {
  const DimVector dims = AllOrDims(dim, x.dim());
  return ReduceGrad(grad, x.sizes(), dims, keepdim) *
         MaybeConj(functional::Exp(x - ReduceGrad(result, x.sizes(), dims, keepdim)));
}

Tensor NanmeanGrad(const Tensor& grad, const Tensor& x, const std::optional<DimVector>& dim, bool keepdim) {
  const DimVector dims = AllOrDims(dim, x.dim());
  Tensor valid = functional::LogicalNot(functional::Isnan(x));
  Tensor count = functional::Sum(valid, dims, true, std::nullopt);
  // A product with the mask (not a select): an all-NaN slice (count 0) gives NaN, as in PyTorch.
  return ReduceGrad(grad, x.sizes(), dims, keepdim) / count * valid;
}

Tensor VectorNormGrad(const Tensor& grad, const Tensor& x, const Tensor& result, const Scalar& ord,
                      const std::optional<DimVector>& dim, bool keepdim) {
  const double p = ord.ToDouble();
  const DimVector dims = AllOrDims(dim, x.dim());
  // dtype= computes in the result's dtype (complex x: its complex dtype; the formulas below then
  // give sgn(x) |x|^(p-1) ..., PyTorch's complex gradients)
  Tensor xs = AsDType(x, IsComplex(x.dtype()) ? ToComplexDType(result.dtype()) : result.dtype());
  if (p == 0) return functional::ZerosLike(xs, std::nullopt, std::nullopt, false);
  Tensor g = ReduceGrad(grad, x.sizes(), dims, keepdim);
  // The norm of single elements is |x| for every p != 0.
  if (p == 1 || CountOf(x.sizes(), dims) == 1) return functional::Sgn(xs) * g;
  Tensor norm = ReduceGrad(result, x.sizes(), dims, keepdim);
  if (p == 2) return g * Masked(xs / norm, functional::Ne(norm, S(0)));
  if (std::isinf(p)) {
    // Shared among the elements attaining the extreme (NaNs count as attaining it).
    Tensor a = functional::Abs(xs);
    Tensor hit = functional::LogicalOr(functional::Eq(a, norm), functional::Isnan(a));
    Tensor count = functional::Sum(hit, dims, true, std::nullopt);
    return Masked(functional::Sgn(xs) * g / count, hit);
  }
  Tensor a = functional::Abs(xs);
  if (p < 1) {
    Tensor scaled = functional::Sgn(xs) * Masked(functional::Pow(a, S(p - 1)), functional::Ne(xs, S(0)));
    return scaled * g * functional::Pow(norm, S(1 - p));
  }
  Tensor scale = Masked(g / functional::Pow(norm, S(p - 1)), functional::Ne(norm, S(0)));
  if (p < 2) return functional::Sgn(xs) * functional::Pow(a, S(p - 1)) * scale;
  return xs * functional::Pow(a, S(p - 2)) * scale;
}

Tensor MatrixNormGrad(const Tensor& grad, const Tensor& a, const Tensor& result, const Scalar& ord,
                      const std::optional<DimVector>& dim, bool keepdim) {
  const double p = ord.ToDouble();
  const DimVector d = dim ? *dim : DimVector{-2, -1};
  const int d0 = WrapDim(d[0], a.dim()), d1 = WrapDim(d[1], a.dim());
  const int sum_dim = std::abs(p) == 1 ? d0 : d1, ext_dim = std::abs(p) == 1 ? d1 : d0;
  Tensor xs = AsDType(a, IsComplex(a.dtype()) ? ToComplexDType(result.dtype()) : result.dtype());
  Tensor s = functional::Sum(functional::Abs(xs), DimVector{sum_dim}, true, std::nullopt);
  Tensor gk = grad, rk = result;
  if (!keepdim) {
    for (int dd : {std::min(d0, d1), std::max(d0, d1)}) {
      gk = functional::Unsqueeze(gk, dd);
      rk = functional::Unsqueeze(rk, dd);
    }
  }
  Tensor gs = ExtremeGrad(gk, s, rk, DimVector{ext_dim}, true);
  return functional::Expand(gs, a.sizes()) * functional::Sgn(xs);
}

}  // namespace oneflow::functional
