#include "autograd/formulas/softmax.h"

#include "autograd/formulas.h"
#include "decl/exp.h"
#include "decl/sum.h"

namespace oneflow::functional {

namespace {
Tensor RowSum(const Tensor& t, int64_t dim) { return functional::Sum(t, DimVector{dim}, true, std::nullopt); }
}  // namespace

Tensor SoftmaxBackwardOutputGrad(const Tensor& u, const Tensor& g, const Tensor& y, int64_t dim) {
  // d/dy_k sum_i u_i y_i (g_i - s), s = sum_j g_j y_j:  u_k (g_k - s) - g_k sum_i u_i y_i.
  return u * (g - RowSum(g * y, dim)) - g * RowSum(u * y, dim);
}

Tensor LogSoftmaxBackwardGradOutputGrad(const Tensor& u, const Tensor& y, int64_t dim) {
  // d/dg_k sum_i u_i (g_i - exp(y_i) S), S = sum_j g_j:  u_k - sum_i u_i exp(y_i).
  return u - RowSum(u * functional::Exp(y), dim);
}

}  // namespace oneflow::functional
