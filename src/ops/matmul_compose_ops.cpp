// Composite products (`backward: composite` in matmul.yaml): outer, inner, tensordot, kron,
// cross, trace, written with differentiable table ops (products end in one mm/bmm on BLAS).
#include "autograd/formulas.h"
#include "ops/copy.h"
#include "decl/broadcast_tensors.h"
#include "decl/cross.h"
#include "decl/diagonal.h"
#include "decl/inner.h"
#include "decl/kron.h"
#include "decl/linalg_cross.h"
#include "decl/mm.h"
#include "decl/mul.h"
#include "decl/outer.h"
#include "decl/permute.h"
#include "decl/reshape.h"
#include "decl/select.h"
#include "decl/stack.h"
#include "decl/sum.h"
#include "decl/tensordot.h"
#include "decl/trace.h"
#include "decl/unsqueeze.h"

namespace oneflow::functional {

Tensor Outer(const Tensor& input, const Tensor& vec2) {
  OpScope scope("outer");
  OF_CHECK(input.dim() == 1) << "Expected 1-D argument self, but got " << input.dim() << "-D";
  OF_CHECK(vec2.dim() == 1) << "Expected 1-D argument vec2, but got " << vec2.dim() << "-D";
  return functional::Mul(functional::Unsqueeze(input, 1), vec2);
}

Tensor Tensordot(const Tensor& input, const Tensor& other, const DimVector& dims_self, const DimVector& dims_other) {
  OpScope scope("tensordot");
  OF_CHECK(dims_self.size() == dims_other.size()) << "both dimension lists should have same length";
  bool ca[kMaxDims] = {false}, cb[kMaxDims] = {false};
  int64_t k = 1;
  DimVector pa, pb;  // permutations: free dims of a then contracted; contracted then free dims of b
  // A contracted pair of sizes 1 and n contracts as PyTorch's: the size-n side is summed over that
  // dim first (keepdim), since a size-1 dim broadcasts against every entry of the other.
  Tensor a0 = input, b0 = other;
  for (int i = 0; i < dims_self.size(); ++i) {
    const int da = WrapDim(dims_self[i], input.dim()), db = WrapDim(dims_other[i], other.dim());
    const int64_t sa = input.sizes()[da], sb = other.sizes()[db];
    OF_CHECK(sa == sb || sa == 1 || sb == 1)
        << "contracted dimensions need to match, but first has size " << sa << " in dim " << da
        << " and second has size " << sb << " in dim " << db;
    OF_CHECK(!ca[da] && !cb[db]) << "dim " << (ca[da] ? da : db) << " appears multiple times in the list of dims";
    if (sa != sb && sb == 1) a0 = functional::Sum(a0, DimVector{da}, true, std::nullopt);
    if (sa != sb && sa == 1) b0 = functional::Sum(b0, DimVector{db}, true, std::nullopt);
    ca[da] = cb[db] = true;
    k *= a0.sizes()[da];
  }
  DimVector out_shape;
  int64_t m = 1, n = 1;
  for (int d = 0; d < input.dim(); ++d)
    if (!ca[d]) { pa.push_back(d); out_shape.push_back(input.sizes()[d]); m *= input.sizes()[d]; }
  for (int i = 0; i < dims_self.size(); ++i) pa.push_back(WrapDim(dims_self[i], input.dim()));
  for (int i = 0; i < dims_other.size(); ++i) pb.push_back(WrapDim(dims_other[i], other.dim()));
  for (int d = 0; d < other.dim(); ++d)
    if (!cb[d]) { pb.push_back(d); out_shape.push_back(other.sizes()[d]); n *= other.sizes()[d]; }
  Tensor a = functional::Reshape(functional::Permute(a0, pa), DimVector{m, k});
  Tensor b = functional::Reshape(functional::Permute(b0, pb), DimVector{k, n});
  return functional::Reshape(functional::Mm(a, b), out_shape);
}

Tensor Inner(const Tensor& input, const Tensor& other) {
  OpScope scope("inner");
  if (input.dim() == 0 || other.dim() == 0) return functional::Mul(input, other);
  OF_CHECK(input.sizes()[input.dim() - 1] == other.sizes()[other.dim() - 1])
      << "inner() the last dimension must match on both input tensors but got shapes " << ShapeStr(input.sizes())
      << " and " << ShapeStr(other.sizes());
  return functional::Tensordot(input, other, DimVector{-1}, DimVector{-1});
}

Tensor Kron(const Tensor& input, const Tensor& other) {
  OpScope scope("kron");
  // Both padded to one rank; a viewed as [a0, 1, a1, 1, ..] times b as [1, b0, 1, b1, ..]
  // broadcasts to [a0, b0, a1, b1, ..], which merges into [a0 * b0, a1 * b1, ..].
  const int nd = std::max(input.dim(), other.dim());
  OF_CHECK(2 * nd <= kMaxDims) << "kron: inputs with more than " << kMaxDims / 2 << " dims are not supported";
  DimVector va, vb, out;
  for (int i = 0; i < nd; ++i) {
    const int ia = i - (nd - input.dim()), ib = i - (nd - other.dim());
    const int64_t sa = ia >= 0 ? input.sizes()[ia] : 1, sb = ib >= 0 ? other.sizes()[ib] : 1;
    va.push_back(sa);
    va.push_back(1);
    vb.push_back(1);
    vb.push_back(sb);
    out.push_back(sa * sb);
  }
  Tensor p = functional::Mul(functional::Reshape(input, va), functional::Reshape(other, vb));
  return functional::Reshape(p, out);
}

namespace {
Tensor CrossAlong(const Tensor& input, const Tensor& other, int64_t dim) {
  std::vector<Tensor> ab = functional::BroadcastTensors({input, other});
  const int d = WrapDim(dim, ab[0].dim());
  auto part = [&](int which, int i) { return functional::Select(ab[which], d, i); };
  Tensor c0 = part(0, 1) * part(1, 2) - part(0, 2) * part(1, 1);
  Tensor c1 = part(0, 2) * part(1, 0) - part(0, 0) * part(1, 2);
  Tensor c2 = part(0, 0) * part(1, 1) - part(0, 1) * part(1, 0);
  return functional::Stack({c0, c1, c2}, d);
}
}  // namespace

Tensor Cross(const Tensor& input, const Tensor& other, std::optional<int64_t> dim) {
  OpScope scope("cross");
  // One dtype, as PyTorch's (no promotion of a float32 . int64 pair).
  OF_CHECK(input.dtype() == other.dtype())
      << "expected scalar type " << DTypeName(input.dtype()) << " but found " << DTypeName(other.dtype());
  OF_CHECK(input.dim() == other.dim()) << "inputs must have the same number of dimensions.";
  DimVector shape = BroadcastShapes(input.sizes(), other.sizes());
  if (!dim) {
    int found = -1;
    for (int d = 0; d < shape.size() && found < 0; ++d)
      if (shape[d] == 3) found = d;
    OF_CHECK(found >= 0) << "no dimension of size 3 in input";
    dim = found;
  }
  const int d = WrapDim(*dim, shape.size());
  OF_CHECK(input.sizes()[d] == 3 && other.sizes()[d] == 3)
      << "inputs dimension " << *dim << " must have length 3. Got " << input.sizes()[d] << " and "
      << other.sizes()[d];
  return CrossAlong(input, other, d);
}

Tensor LinalgCross(const Tensor& input, const Tensor& other, int64_t dim) {
  OpScope scope("linalg.cross");
  // One dtype, as PyTorch's (no promotion of a float32 . int64 pair).
  OF_CHECK(input.dtype() == other.dtype())
      << "expected scalar type " << DTypeName(input.dtype()) << " but found " << DTypeName(other.dtype());
  OF_CHECK(input.dim() == other.dim()) << "inputs must have the same number of dimensions.";
  const int d = WrapDim(dim, input.dim());
  OF_CHECK(input.sizes()[d] == 3 && other.sizes()[d] == 3)
      << "inputs dimension " << dim << " must have length 3. Got " << input.sizes()[d] << " and "
      << other.sizes()[d];
  return CrossAlong(input, other, d);
}

Tensor Trace(const Tensor& input) {
  OpScope scope("trace");
  OF_CHECK(input.dim() == 2) << "expected a matrix, but got tensor with dim " << input.dim();
  OF_CHECK(input.dtype() != DType::kBool) << "\"trace\" not implemented for 'Bool'";
  return functional::Sum(functional::Diagonal(input, 0, 0, 1), std::nullopt, false, std::nullopt);
}

}  // namespace oneflow::functional
