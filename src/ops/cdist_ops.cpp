// cdist: p-norm distances between the rows of two (batched) point sets. p = 2 with more than 25
// rows on a side (PyTorch's use_mm_for_euclid_dist_if_necessary) takes PyTorch's matrix-product
// form, one batched GEMM of [-2 x1, |x1|^2, 1] and [x2, 1, |x2|^2]; everything else is computed
// directly (kernels/cdist.h).
#include <cmath>
#include <limits>

#include "kernels/cdist.h"
#include "ops/copy.h"
#include "decl/bmm.h"
#include "decl/cat.h"
#include "decl/cdist.h"
#include "decl/clamp_min.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/mul.h"
#include "decl/ones_like.h"
#include "decl/reshape.h"
#include "decl/sqrt.h"
#include "decl/sum.h"
#include "decl/transpose.h"

namespace oneflow {

Tensor Cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<std::string> compute_mode) {
  OpScope scope("cdist");
  OF_CHECK(x1.dim() >= 2) << "cdist only supports at least 2D tensors, X1 got: " << x1.dim() << "D";
  OF_CHECK(x2.dim() >= 2) << "cdist only supports at least 2D tensors, X2 got: " << x2.dim() << "D";
  OF_CHECK(IsFloating(x1.dtype())) << "cdist only supports floating-point dtypes, X1 got: " << TorchTypeName(x1.dtype());
  OF_CHECK(IsFloating(x2.dtype())) << "cdist only supports floating-point dtypes, X2 got: " << TorchTypeName(x2.dtype());
  OF_CHECK(x1.dtype() == x2.dtype()) << "X1 and X2 must have the same dtype, got " << DTypeName(x1.dtype())
                                     << " and " << DTypeName(x2.dtype());
  OF_CHECK(x1.dtype() == DType::kFloat32 || x1.dtype() == DType::kFloat64)
      << "\"cdist\" not implemented for '" << DTypeName(x1.dtype()) << "'";
  const int64_t m1 = x1.sizes()[x1.dim() - 1], m2 = x2.sizes()[x2.dim() - 1];
  OF_CHECK(m1 == m2) << "X1 and X2 must have the same number of columns. X1: " << m1 << " X2: " << m2;
  OF_CHECK(p >= 0) << "cdist only supports non-negative p values";
  OF_CHECK_VALUE(compute_mode) << "None is not a valid value for compute_mode";
  const std::string& mode = *compute_mode;
  OF_CHECK_VALUE(mode == "use_mm_for_euclid_dist_if_necessary" || mode == "use_mm_for_euclid_dist" ||
                 mode == "donot_use_mm_for_euclid_dist")
      << mode << " is not a valid value for compute_mode";
  CheckSameDevice(x1, x2);
  const int64_t r1 = x1.sizes()[x1.dim() - 2], r2 = x2.sizes()[x2.dim() - 2];
  DimVector b1(x1.sizes().begin(), x1.sizes().end() - 2), b2(x2.sizes().begin(), x2.sizes().end() - 2);
  DimVector batch = BroadcastShapes(b1, b2);
  DimVector shape = batch;
  shape.push_back(r1);
  shape.push_back(r2);
  Tensor out = Empty(shape, x1.dtype(), x1.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const int64_t nb = NumelOf(batch);
  DimVector e1 = batch, e2 = batch;
  e1.push_back(r1);
  e1.push_back(m1);
  e2.push_back(r2);
  e2.push_back(m2);
  Tensor a = Contiguous(Reshape(Expand(x1, e1), DimVector{nb, r1, m1}));
  Tensor b = Contiguous(Reshape(Expand(x2, e2), DimVector{nb, r2, m2}));
  Tensor o = Reshape(out, DimVector{nb, r1, r2});
  if (p == 2.0 && mode != "donot_use_mm_for_euclid_dist" && (mode == "use_mm_for_euclid_dist" || r1 > 25 || r2 > 25)) {
    const Tensor an = Sum(Mul(a, a), DimVector{-1}, true, std::nullopt);
    const Tensor bn = Sum(Mul(b, b), DimVector{-1}, true, std::nullopt);
    const Tensor lhs = Cat({Mul(a, ScalarToTensor(Scalar(-2.0), a.dtype())), an,
                            OnesLike(an, std::nullopt, std::nullopt, false)}, -1);
    const Tensor rhs = Cat({b, OnesLike(bn, std::nullopt, std::nullopt, false), bn}, -1);
    CopyInto(o, Sqrt(ClampMin(Bmm(lhs, Transpose(rhs, 1, 2)), ScalarToTensor(Scalar(0.0), a.dtype()))));
    return out;
  }
  Tensor c = o.is_contiguous() ? o : Empty(o.sizes(), o.dtype(), o.device());
  CdistRows(a, b, c, p);
  if (!c.is_same(o)) CopyInto(o, c);
  return out;
}

}  // namespace oneflow
