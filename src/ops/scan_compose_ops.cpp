// Composite scan-family ops (`backward: composite` in scan.yaml), from differentiable table ops.
#include <vector>
#include "decl/cat.h"
#include "decl/clone.h"
#include "decl/diff.h"
#include "decl/logical_xor.h"
#include "decl/narrow.h"
#include "decl/sub.h"


namespace oneflow::functional {

namespace {
// prepend / append: input's rank, and input's sizes except along the differencing dim d.
void CheckDiffEdge(const Tensor& input, const Tensor& t, int d) {
  OF_CHECK(t.dim() == input.dim()) << "diff expects prepend or append to be the same dimension as input";
  for (int i = 0; i < input.dim(); ++i)
    OF_CHECK(i == d || t.sizes()[i] == input.sizes()[i])
        << "diff expects the shape of tensor to prepend or append to match that of input except along the "
           "differencing dimension; input.size("
        << i << ") = " << input.sizes()[i] << ", but got tensor.size(" << i << ") = " << t.sizes()[i];
}
}  // namespace

// The n-th forward difference x[1:] - x[:-1] along dim, n times (bool: logical_xor, as PyTorch);
// a dim that runs out leaves an empty result. Always a new tensor, as PyTorch's.
Tensor Diff(const Tensor& input, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) {
  OpScope scope("diff");
  OF_CHECK(input.dim() >= 1) << "diff expects input to be at least one-dimensional";
  OF_CHECK(n >= 0) << "order must be non-negative but got " << n;
  const int d = WrapDim(dim, input.dim());
  std::vector<Tensor> parts;
  if (prepend.defined()) CheckDiffEdge(input, prepend, d), parts.push_back(prepend);
  parts.push_back(input);
  if (append.defined()) CheckDiffEdge(input, append, d), parts.push_back(append);
  Tensor x = parts.size() == 1 ? input : functional::Cat(parts, d);
  for (int64_t k = 0; k < n && x.sizes()[d] > 0; ++k) {
    const int64_t len = x.sizes()[d] - 1;
    const Tensor hi = functional::Narrow(x, d, 1, len), lo = functional::Narrow(x, d, 0, len);
    x = x.dtype() == DType::kBool ? functional::LogicalXor(hi, lo) : functional::Sub(hi, lo, Scalar(1));
  }
  return x.is_same(input) ? functional::Clone(input) : x;
}

}  // namespace oneflow::functional
