// Vector and matrix norms. vector_norm reduces rows of the reduced elements (ops/reduce_util.h)
// in one pass with a double accumulator; matrix_norm's orders 1, -1, inf, -inf are the extreme
// column / row sums of |A|, composed from the reduction kernels.
#include <cmath>
#include <limits>

#include "kernels/norm.h"
#include "ops/copy.h"
#include "ops/reduce_util.h"
#include "decl/abs.h"
#include "decl/amax.h"
#include "decl/amin.h"
#include "decl/empty.h"
#include "decl/linalg_matrix_norm.h"
#include "decl/linalg_vector_norm.h"
#include "decl/squeeze.h"
#include "decl/sum.h"

namespace oneflow {

namespace {

// Complex input: a complex dtype= (the norm itself is real, of the parts' dtype).
void CheckFloatInput(const Tensor& input, const std::optional<DType>& dtype) {
  OF_CHECK(IsFloating(input.dtype()) || IsComplex(input.dtype()))
      << "Expected a floating point or complex tensor as input. Got " << DTypeName(input.dtype());
  if (!dtype) return;
  if (IsComplex(input.dtype())) {
    OF_CHECK(IsComplex(*dtype)) << "dtype should be complex for complex inputs, but got " << DTypeName(*dtype);
  } else {
    OF_CHECK(IsFloating(*dtype)) << "dtype should be floating point, but got " << DTypeName(*dtype);
  }
}

// The real tensor a norm of `input` reduces: input in dtype; |input| for complex input.
Tensor NormOperand(const Tensor& input, const std::optional<DType>& dtype) {
  const Tensor x = CastTo(input, dtype.value_or(input.dtype()));
  return IsComplex(x.dtype()) ? Abs(x) : x;
}

// The two matrix dims of matrix_norm (default the last two), wrapped and checked.
std::pair<int, int> MatrixNormDims(const Tensor& input, const std::optional<DimVector>& dim) {
  const DimVector d = dim ? *dim : DimVector{-2, -1};
  OF_CHECK(d.size() == 2) << "dim must be a 2-tuple. Got " << ShapeStr(d);
  const int d0 = WrapDim(d[0], input.dim()), d1 = WrapDim(d[1], input.dim());
  OF_CHECK(d0 != d1) << "dims must be different. Got (" << d[0] << ", " << d[1] << ")";
  return {d0, d1};
}

}  // namespace

Tensor LinalgVectorNorm(const Tensor& input, const Scalar& ord, std::optional<DimVector> dim, bool keepdim,
                        std::optional<DType> dtype) {
  OpScope scope("linalg.vector_norm");
  // A complex order was read as its real part (norm(x, 1j) was the 0-norm).
  OF_CHECK(!ord.is_complex()) << "Expected a non-complex scalar as the order of norm.";
  CheckFloatInput(input, dtype);
  if (IsComplex(input.dtype())) return LinalgVectorNorm(NormOperand(input, dtype), ord, dim, keepdim, std::nullopt);
  const double p = ord.ToDouble();
  const DType dt = dtype ? *dtype : input.dtype();
  const ReduceDims r = MakeReduceDims(input, dim, keepdim);
  OF_CHECK(!(r.inner == 0 && (p < 0 || std::isinf(p))))
      << "cannot compute the " << p << " norm on an empty tensor because the operation does not have an identity";
  Tensor out = Empty(r.out_shape, dt, input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const Tensor rows = ReducedLast(CastTo(input, dt), r);
  RowNorm(rows, r.outer, r.inner, p, out);
  return out;
}

Tensor LinalgMatrixNorm(const Tensor& input, const Scalar& ord, std::optional<DimVector> dim, bool keepdim,
                        std::optional<DType> dtype) {
  OpScope scope("linalg.matrix_norm");
  OF_CHECK(!ord.is_complex()) << "Expected a non-complex scalar as the order of norm.";
  OF_CHECK(input.dim() >= 2) << "The input tensor A must have at least 2 dimensions.";
  CheckFloatInput(input, dtype);
  const auto [d0, d1] = MatrixNormDims(input, dim);
  const double p = ord.ToDouble();
  if (std::abs(p) == 2)
    OF_THROW(kNotImplemented) << "ord=" << p << " is the extreme singular value, which needs linalg.svdvals "
                                 "(not available in this build)";
  OF_CHECK(std::abs(p) == 1 || std::isinf(p)) << "Order " << p << " not supported.";
  // ord 1: extreme column sum (sum over rows d0, then across d1); ord inf: extreme row sum.
  const int sum_dim = std::abs(p) == 1 ? d0 : d1, ext_dim = std::abs(p) == 1 ? d1 : d0;
  OF_CHECK(input.size(ext_dim) > 0) << "Expected a non-empty matrix along dim " << ext_dim
                                    << " for the " << p << " norm";
  const Tensor x = NormOperand(input, dtype);
  Tensor s = Sum(Abs(x), DimVector{sum_dim}, true, std::nullopt);
  Tensor e = p > 0 ? Amax(s, DimVector{ext_dim}, true) : Amin(s, DimVector{ext_dim}, true);
  return keepdim ? e : Squeeze(e, DimVector{d0, d1});
}

}  // namespace oneflow
