// Pointwise ops with extra arguments: add/sub (alpha), where (clamp: math_ops.cpp).
#include "ops/pointwise.h"
#include "ops_decl.h"

namespace oneflow {

namespace {
// other * alpha, with alpha = 1 costing nothing.
Tensor Scaled(const Tensor& input, const Tensor& other, const Scalar& alpha) {
  OF_CHECK(!(alpha.is_float() && !IsFloating(ResultType({&input, &other}))))
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

namespace {
struct WhereSelect {
  template <typename T> T operator()(bool c, T a, T b) const { return c ? a : b; }
};
}  // namespace

Tensor Where(const Tensor& condition, const Tensor& input, const Tensor& other) {
  OpScope scope("where");
  OF_CHECK(condition.dtype() == DType::kBool)
      << "where expected condition to be a boolean tensor, but got a tensor with dtype "
      << DTypeName(condition.dtype());
  DType dt = ResultType({&input, &other});
  DimVector shape = BroadcastShapes(condition.sizes(), BroadcastShapes(input.sizes(), other.sizes()));
  CheckSameDevice(condition, input);
  CheckSameDevice(condition, other);
  Tensor out = Empty(shape, dt, condition.device());
  Tensor c = CastTo(condition, DType::kBool), a = CastTo(input, dt), b = CastTo(other, dt);
  const Tensor* ops[4] = {&out, &c, &a, &b};
  LoopPlan plan = MakePlan(shape, ops, 4);
  if (out.device().type == DeviceType::kMeta) return out;
  DispatchAll(dt, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    RunLoop(plan, [](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            *reinterpret_cast<const bool*>(p[1] + i * s[1]) ? *reinterpret_cast<const T*>(p[2] + i * s[2])
                                                             : *reinterpret_cast<const T*>(p[3] + i * s[3]);
    });
  });
  return out;
}

}  // namespace oneflow
