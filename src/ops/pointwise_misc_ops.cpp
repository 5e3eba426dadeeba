// Pointwise ops with extra arguments: add/sub (alpha). clamp: math_ops.cpp; where: masked_ops.cpp.
#include "ops/pointwise.h"
#include "ops/copy.h"
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

// Note [Bool minus a number]: OneFlow computes `1 - mask` and `mask - 1` for a bool tensor and a
// Python number (LiBai's T5 builds its attention masks so): the bool tensor counts as int64, so
// the result is int64 for an integral number and the default float dtype for a floating one.
// PyTorch refuses both; two bool tensors, or a bool tensor and a non-number tensor, are refused
// as in PyTorch (docs/oneflow_differences.md).
namespace {
Tensor BoolAsInt64ForNumber(const Tensor& t, const Tensor& partner) {
  if (t.dtype() == DType::kBool && partner.is_wrapped_number() && partner.dtype() != DType::kBool)
    return CastTo(t, DType::kInt64);
  return t;
}
}  // namespace

Tensor Sub(const Tensor& input, const Tensor& other, const Scalar& alpha) {
  OpScope scope("sub");
  const Tensor a = BoolAsInt64ForNumber(input, other);
  const Tensor b = BoolAsInt64ForNumber(other, input);
  CheckSub(a, b);
  return BinaryOp<SubFunctor, ResultKind::kSame, DTypeSet::kNumber>(a, Scaled(a, b, alpha));
}

Tensor& Sub_(Tensor& input, const Tensor& other, const Scalar& alpha) {
  OpScope scope("sub_");
  CheckSub(input, other);
  return BinaryOpInplace<SubFunctor, ResultKind::kSame, DTypeSet::kNumber>(input, Scaled(input, other, alpha));
}

}  // namespace oneflow
