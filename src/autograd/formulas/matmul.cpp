#include "autograd/formulas/matmul.h"

#include <cmath>

#include "autograd/formulas.h"
#include "decl/abs.h"
#include "decl/eq.h"
#include "decl/ne.h"
#include "decl/pow.h"
#include "decl/sgn.h"
#include "decl/sum.h"
#include "decl/unsqueeze.h"
#include "decl/where.h"
#include "decl/zeros_like.h"

namespace oneflow::functional {

Tensor CdistGrad(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, const Tensor& result, int which) {
  // diff [..., r1, r2, m]; the gradient of each distance w.r.t. diff, weighted by grad.
  Tensor diff = functional::Unsqueeze(x1, -2) - functional::Unsqueeze(x2, -3);
  Tensor dist = functional::Unsqueeze(result, -1);
  Tensor g = functional::Unsqueeze(grad, -1);
  Tensor nonzero = functional::Ne(dist, S(0));
  Tensor d;
  if (p == 0.0) {
    d = functional::ZerosLike(diff, std::nullopt, std::nullopt, false);
  } else if (p == 1.0) {
    d = g * functional::Sgn(diff);
  } else if (p == 2.0) {
    d = Masked(g * diff / functional::Where(nonzero, dist, S(1)), nonzero);
  } else if (std::isinf(p)) {
    // The coordinates where |diff| reaches the maximum carry the gradient.
    Tensor at_max = functional::Eq(functional::Abs(diff), dist);
    d = Masked(g * functional::Sgn(diff), at_max);
  } else {
    Tensor safe = functional::Where(nonzero, dist, S(1));
    Tensor ratio = functional::Abs(diff) / safe;
    d = Masked(g * functional::Sgn(diff) * functional::Pow(ratio, S(p - 1)), nonzero);
    if (p < 1) d = Masked(d, functional::Ne(diff, S(0)));
  }
  return which == 0 ? functional::Sum(d, DimVector{-2}, false, std::nullopt)
                    : -functional::Sum(d, DimVector{-3}, false, std::nullopt);
}

}  // namespace oneflow::functional
