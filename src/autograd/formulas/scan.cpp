#include "autograd/formulas/scan.h"

#include <limits>

#include "autograd/formulas.h"
#include "autograd/formulas/complex.h"
#include "autograd/grad_mode.h"
#include "decl/abs.h"
#include "decl/any.h"
#include "decl/cat.h"
#include "decl/conj.h"
#include "decl/cumprod.h"
#include "decl/cumsum.h"
#include "decl/eq.h"
#include "decl/exp.h"
#include "decl/gt.h"
#include "decl/log.h"
#include "decl/logcumsumexp.h"
#include "decl/logical_and.h"
#include "decl/lt.h"
#include "decl/narrow.h"
#include "decl/ones.h"
#include "decl/prod.h"
#include "decl/reverse_cumsum.h"
#include "decl/reverse_logcumsumexp.h"
#include "decl/sum.h"
#include "decl/where.h"

namespace oneflow::functional {

namespace {

bool AnyTrue(const Tensor& mask) {
  return ItemOf(::oneflow::Any(mask, std::nullopt, false)).ToInt() != 0;
}

// The O(n^2) form: grad_x[k] = sum_{j>=k} grad_j * prod_{m<k} x_m * prod_{k<m<=j} x_m.
Tensor CumprodGradQuadratic(const Tensor& grad, const Tensor& x, int d, int64_t n) {
  DimVector one_shape = x.sizes();
  one_shape[d] = 1;
  Tensor ones = functional::Ones(one_shape, x.dtype(), x.device(), false);
  std::vector<Tensor> parts;
  for (int64_t k = 0; k < n; ++k) {
    Tensor omitted = ones;  // prod_{m<k} x_m, then times the running products after k
    if (k > 0) omitted = functional::Prod(functional::Narrow(x, d, 0, k), d, true, std::nullopt);
    if (k + 1 < n) {
      Tensor after = functional::Cumprod(functional::Narrow(x, d, k + 1, n - k - 1), d, std::nullopt);
      omitted = functional::Cat({omitted, omitted * after}, d);
    }
    parts.push_back(functional::Sum(functional::Narrow(grad, d, k, n - k) * omitted, DimVector{d}, true,
                                    std::nullopt));
  }
  return functional::Cat(parts, d);
}

double Lowest(DType t) {
  switch (t) {
    case DType::kFloat16: return -65504.0;
    case DType::kBFloat16: return -3.3895313892515355e38;
    case DType::kFloat32: return -static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::lowest();
  }
}

}  // namespace

Tensor CumprodGrad(const Tensor& grad, const Tensor& x_in, const Tensor& result_in, int64_t dim) {
  // Every branch multiplies grad by products of x's and result's elements: for complex input
  // those are conjugated (conjugate Wirtinger derivatives, formulas/complex.h).
  const Tensor x = MaybeConj(x_in), result = MaybeConj(result_in);
  const int d = WrapDim(dim, x.dim());
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  if (x.numel() == 0 || n == 1) return grad;
  Tensor zero = functional::Eq(x, S(0));
  if (!AnyTrue(zero)) return functional::ReverseCumsum(grad * result, d) / x;
  if (GradMode::is_enabled()) return CumprodGradQuadratic(grad, x, d, n);
  Tensor seen = functional::Cumsum(zero, d, std::nullopt);  // zeros so far, inclusive
  Tensor before = functional::Eq(seen, S(0));
  Tensor first = functional::LogicalAnd(zero, functional::Eq(seen, S(1)));
  Tensor g_before = functional::ReverseCumsum(grad * result, d) / functional::Where(zero, S(1), x);
  Tensor g_first = functional::ReverseCumsum(grad * functional::Cumprod(functional::Where(first, S(1), x), d, std::nullopt), d);
  return functional::Where(before, g_before, Masked(g_first, first));
}

Tensor LogcumsumexpGrad(const Tensor& grad, const Tensor& x, const Tensor& result, int64_t dim, bool reverse) {
  // A scan over one element is the identity.
  if (x.numel() == 0 || x.dim() == 0 || x.size(dim) == 1) return grad;
  auto scan = [&](const Tensor& t) {
    return reverse ? functional::Logcumsumexp(t, dim) : functional::ReverseLogcumsumexp(t, dim);
  };
  // Complex: d r_k / d x_j = exp(x_j - r_k) (j <= k), so grad_j = conj(exp(x_j) sum_k conj(g_k)
  // exp(-r_k)), the sum in the log domain through the complex log (its phase carries the signs).
  if (IsComplex(grad.dtype()))
    return functional::Conj(functional::Exp(scan(functional::Log(functional::Conj(grad)) - result) + x));
  Tensor lowest = S(Lowest(grad.dtype()));
  Tensor log_abs = functional::Log(functional::Abs(grad));
  Tensor log_pos = functional::Where(functional::Gt(grad, S(0)), log_abs, lowest);
  Tensor log_neg = functional::Where(functional::Lt(grad, S(0)), log_abs, lowest);
  return functional::Exp(scan(log_pos - result) + x) - functional::Exp(scan(log_neg - result) + x);
}

}  // namespace oneflow::functional
