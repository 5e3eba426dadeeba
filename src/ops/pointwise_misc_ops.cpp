// Pointwise ops with extra arguments: add/sub (alpha). clamp: math_ops.cpp; where: masked_ops.cpp.
#include "ops/pointwise.h"
#include "decl/add.h"
#include "decl/mul.h"
#include "decl/sub.h"

namespace oneflow {

namespace {
// other * alpha, with alpha = 1 costing nothing.
Tensor Scaled(const Tensor& input, const Tensor& other, const Scalar& alpha) {
  const DType rt = ResultType({&input, &other});
  OF_CHECK(!(alpha.is_float() && !IsFloating(rt) && !IsComplex(rt)))
      << "For integral input tensors, argument alpha must not be a floating point number.";
  if (alpha.ToDouble() == 1.0) return other;
  return Mul(other, WrappedNumber(alpha));
}
}  // namespace

Tensor Add(const Tensor& input, const Tensor& other, const Scalar& alpha) {
  OpScope scope("add");
  return BinaryOp<AddFunctor, ResultKind::kSame, DTypeSet::kAll>(input, Scaled(input, other, alpha));
}

Tensor& Add_(Tensor& input, const Tensor& other, const Scalar& alpha) {
  OpScope scope("add_");
  return BinaryOpInplace<AddFunctor, ResultKind::kSame, DTypeSet::kAll>(input, Scaled(input, other, alpha));
}

namespace {
void CheckSub(const Tensor& a, const Tensor& b) {
  OF_CHECK(!(a.dtype() == DType::kBool && b.dtype() == DType::kBool))
      << "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
         "`logical_xor()` operator instead.";
  OF_CHECK(a.dtype() != DType::kBool && b.dtype() != DType::kBool)
      << "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
         "to invert a mask, use the `~` or `logical_not()` operator instead.";
}
}  // namespace

Tensor Sub(const Tensor& input, const Tensor& other, const Scalar& alpha) {
  OpScope scope("sub");
  CheckSub(input, other);
  return BinaryOp<SubFunctor, ResultKind::kSame, DTypeSet::kNumber>(input, Scaled(input, other, alpha));
}

Tensor& Sub_(Tensor& input, const Tensor& other, const Scalar& alpha) {
  OpScope scope("sub_");
  CheckSub(input, other);
  return BinaryOpInplace<SubFunctor, ResultKind::kSame, DTypeSet::kNumber>(input, Scaled(input, other, alpha));
}

}  // namespace oneflow
