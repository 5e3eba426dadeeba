// Entries of the special functions that the generated ones can't express: polygamma (the order
// comes first) and the argument check of mvlgamma.
#include "kernels/functors/special.h"
#include "ops/pointwise.h"
#include "decl/polygamma.h"

namespace oneflow {

void CheckMvlgamma(const Tensor& input, int64_t p) {
  OF_CHECK(input.dtype() != DType::kBool) << "The input tensor may not be a boolean tensor.";
  OF_CHECK(p >= 1) << "p has to be greater than or equal to 1, got " << p;
  // The kernel sums p lgamma terms per element (its gradient p digamma terms): a huge p would run
  // for hours (PyTorch materialises numel * p terms and fails to allocate them).
  constexpr int64_t kMaxP = int64_t{1} << 16;
  OF_CHECK(p <= kMaxP) << "p = " << p << " is too large: the multivariate log-gamma sums p terms per element "
                       << "(at most " << kMaxP << ")";
}

Tensor Polygamma(int64_t n, const Tensor& input) {
  OpScope scope("polygamma");
  OF_CHECK(n >= 0) << "polygamma(n, x) does not support negative n, got n = " << n;
  return UnaryOp<PolygammaFunctor, ResultKind::kFloat, DTypeSet::kFloat>(input, PolygammaFunctor{n});
}

}  // namespace oneflow
