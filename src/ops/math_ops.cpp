// Pointwise math with hand-written entries: clamp (tensor or number bounds), div with a rounding
// mode, nan_to_num, float_power, positive; and the `check:` functions of generated math ops
// (src/ops/table/math.yaml).
#include <limits>
#include <string>

#include "kernels/functors/math_shared.h"
#include "kernels/nextafter.h"
#include "ops/pointwise.h"
#include "decl/clamp.h"
#include "decl/div.h"
#include "decl/empty.h"
#include "decl/float_power.h"
#include "decl/nan_to_num.h"
#include "decl/nextafter.h"
#include "decl/positive.h"


namespace oneflow {

// ---- checks of generated entries (declared by the generator) ----

void CheckRound(const Tensor& input, int64_t decimals) {
  OF_CHECK(decimals == 0 || IsFloating(input.dtype()))
      << "rounding to " << decimals << " decimals is not implemented for "
      << DTypeName(input.dtype()) << " tensors (only floating point ones)";
}

void CheckHeaviside(const Tensor& input, const Tensor& values) {
  OF_CHECK(input.dtype() == values.dtype())
      << "heaviside is not yet implemented for tensors with different dtypes (got "
      << DTypeName(input.dtype()) << " and " << DTypeName(values.dtype()) << ")";
}

// lerp (ternary.yaml): a weight tensor of another kind than the input is PyTorch's RuntimeError
// (promotion made a bool mask a weight of 0 / 1, and a complex weight a complex result of real
// operands); a Python number weight is any number.
void CheckLerp(const Tensor& input, const Tensor& end, const Tensor& weight) {
  const bool kind = weight.is_wrapped_number() || IsFloating(weight.dtype()) ||
                    (IsComplex(weight.dtype()) && (IsComplex(input.dtype()) || IsComplex(end.dtype())));
  OF_CHECK(kind) << "expected dtype " << DTypeName(input.dtype()) << " for `weight` but got dtype "
                 << DTypeName(weight.dtype());
}

void CheckIntegerNotBool(const Tensor& input, const Tensor& other) {
  OF_CHECK(ResultType({&input, &other}) != DType::kBool) << "not implemented for 'Bool' tensors";
}

void CheckIsclose(const Tensor& input, const Tensor& other, double rtol, double atol, bool) {
  OF_CHECK(input.dtype() == other.dtype())
      << "expected both inputs to have the same dtype, but " << DTypeName(input.dtype())
      << " did not match " << DTypeName(other.dtype());
  OF_CHECK(rtol >= 0) << "rtol must be greater than or equal to zero, but got " << rtol;
  OF_CHECK(atol >= 0) << "atol must be greater than or equal to zero, but got " << atol;
}

void CheckAddcdiv(const Tensor&, const Tensor& tensor1, const Tensor& tensor2, const Scalar&) {
  OF_CHECK(IsFloating(tensor1.dtype()) || IsFloating(tensor2.dtype()) || IsComplex(tensor1.dtype()) ||
           IsComplex(tensor2.dtype()))
      << "Integer division with addcdiv is no longer supported, and in a future release addcdiv "
         "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
         "be implemented as (input + value * oneflow.trunc(tensor1 / tensor2)).to(input.dtype) "
         "for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The "
         "future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
         "tensor2), for all dtypes.";
}

// ---- clamp ----

namespace {

bool HasData(const Tensor& t) { return !t.defined() || t.device().type != DeviceType::kMeta; }
bool IsNumber(const Tensor& t) { return !t.defined() || (t.dim() == 0 && HasData(t)); }

// The dtype and shape of clamp's result: the bounds take part in promotion (Python numbers as
// wrapped numbers), the shape is the broadcast of all operands.
DType ClampDType(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  OF_CHECK(lo.defined() || hi.defined()) << "At least one of 'min' or 'max' must not be None";
  const DType dt = !lo.defined() ? ResultType({&x, &hi}) : !hi.defined() ? ResultType({&x, &lo})
                                                                         : ResultType({&x, &lo, &hi});
  OF_CHECK(dt != DType::kBool) << "clamp is not supported for bool tensors";
  return dt;
}

DimVector ClampShape(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  DimVector s = x.sizes();
  if (lo.defined()) s = BroadcastShapes(s, lo.sizes());
  if (hi.defined()) s = BroadcastShapes(s, hi.sizes());
  return s;
}

// Number bounds: one vectorised pass with the bounds held in registers.
void ClampNumbers(const Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi) {
  const Tensor* ops[2] = {&out, &in};
  LoopPlan plan = MakePlan(out.sizes(), ops, 2);
  DispatchNumber(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    // A missing bound is the type's extreme, so that one branch-free select pair serves every
    // case and vectorises (runtime "has a bound" branches kept the loop scalar, 30x slower on
    // data that mispredicts). NaN inputs fall through both selects unchanged; a NaN bound makes
    // every result NaN (ClampMinFunctor / ClampMaxFunctor's semantics).
    using Lim = std::numeric_limits<M>;
    constexpr M kLow = Lim::has_infinity ? -Lim::infinity() : Lim::lowest();
    constexpr M kHigh = Lim::has_infinity ? Lim::infinity() : Lim::max();
    const M l = lo.defined() ? ItemOf(lo).template To<M>() : kLow;
    const M h = hi.defined() ? ItemOf(hi).template To<M>() : kHigh;
    if (l != l || h != h) {
      auto nan = [](M) { return Lim::quiet_NaN(); };
      RunLoop(plan, [&nan](char** p, const int64_t* s, int64_t n) { UnaryInner<T, T>(p, s, n, nan); });
      return;
    }
    auto f = [=](M x) {
      const M y = x < l ? l : x;
      return y > h ? h : y;
    };
    RunLoop(plan, [&f](char** p, const int64_t* s, int64_t n) { UnaryInner<T, T>(p, s, n, f); });
  });
}

// The number-bounds pass walks host memory: CUDA tensors take the functor kernels below.
bool HostNumbers(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  return IsNumber(lo) && IsNumber(hi) && x.device().type == DeviceType::kCPU;
}

Tensor ClampAny(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  const DType dt = ClampDType(x, lo, hi);
  if (HostNumbers(x, lo, hi)) {
    Tensor out = Empty(x.sizes(), dt, x.device());
    ClampNumbers(out, CastTo(x, dt), lo, hi);
    return out;
  }
  if (!hi.defined()) return BinaryOp<ClampMinFunctor, ResultKind::kSame, DTypeSet::kNumber>(x, lo);
  if (!lo.defined()) return BinaryOp<ClampMaxFunctor, ResultKind::kSame, DTypeSet::kNumber>(x, hi);
  return TernaryOp<ClampFunctor, ResultKind::kSame, DTypeSet::kNumber>(x, lo, hi);
}

// PyTorch's clamp takes two numbers or two tensors (upstream OneFlow's two Scalars): a tensor
// bound beside a number one has no overload there, and no meaning worth guessing here.
void CheckBoundsOfOneKind(const Tensor& lo, const Tensor& hi) {
  if (!lo.defined() || !hi.defined()) return;
  OF_CHECK_TYPE(lo.is_wrapped_number() == hi.is_wrapped_number())
      << "expected min and max both Tensors or both numbers, got min a "
      << (lo.is_wrapped_number() ? "number" : "Tensor") << " and max a " << (hi.is_wrapped_number() ? "number" : "Tensor");
}

}  // namespace

// The bounds are `TensorLike?` (std::optional<Tensor>); None is the undefined tensor below.
Tensor Clamp(const Tensor& input, std::optional<Tensor> min_opt, std::optional<Tensor> max_opt) {
  OpScope scope("clamp");
  CheckBoundsOfOneKind(min_opt.value_or(Tensor()), max_opt.value_or(Tensor()));
  return ClampAny(input, min_opt.value_or(Tensor()), max_opt.value_or(Tensor()));
}

Tensor& Clamp_(Tensor& input, std::optional<Tensor> min_opt, std::optional<Tensor> max_opt) {
  OpScope scope("clamp_");
  const Tensor min = min_opt.value_or(Tensor()), max = max_opt.value_or(Tensor());
  CheckBoundsOfOneKind(min, max);
  const DType dt = ClampDType(input, min, max);
  CheckInplaceResult(input, dt, ClampShape(input, min, max));
  if (dt == input.dtype() && HostNumbers(input, min, max)) {
    ClampNumbers(input, input, min, max);  // elementwise in place: no overlap issue
  } else {
    CopyInto(input, ClampAny(input, min, max));
  }
  input.BumpVersion();
  return input;
}

// ---- div with a rounding mode ----

namespace {


enum class Rounding { kNone, kTrunc, kFloor };

Rounding ParseRounding(const std::optional<std::string>& mode) {
  if (!mode) return Rounding::kNone;
  if (*mode == "trunc") return Rounding::kTrunc;
  if (*mode == "floor") return Rounding::kFloor;
  OF_THROW(kRuntime) << "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '"
                   << *mode << "'";
}

void CheckRoundedIntegerDivisor(const Tensor& a, const Tensor& b) {
  const DType dt = ResultType({&a, &b});
  if (!IsFloating(dt) && b.device().type != DeviceType::kMeta) CheckIntegerDivisor(b);
}

}  // namespace

Tensor Div(const Tensor& input, const Tensor& other, std::optional<std::string> rounding_mode) {
  OpScope scope("div");
  switch (ParseRounding(rounding_mode)) {
    case Rounding::kNone:
      return BinaryOp<DivFunctor, ResultKind::kFloat, DTypeSet::kAll>(input, other);
    case Rounding::kTrunc:
      CheckRoundedIntegerDivisor(input, other);
      return BinaryOp<TruncDivideFunctor, ResultKind::kSame, DTypeSet::kNumber>(input, other);
    case Rounding::kFloor:
      return BinaryOp<FloorDivideFunctor, ResultKind::kSame, DTypeSet::kNumber>(input, other);
  }
  OF_ASSERT(false) << "unreachable";
}

Tensor& Div_(Tensor& input, const Tensor& other, std::optional<std::string> rounding_mode) {
  OpScope scope("div_");
  switch (ParseRounding(rounding_mode)) {
    case Rounding::kNone:
      return BinaryOpInplace<DivFunctor, ResultKind::kFloat, DTypeSet::kAll>(input, other);
    case Rounding::kTrunc:
      CheckRoundedIntegerDivisor(input, other);
      return BinaryOpInplace<TruncDivideFunctor, ResultKind::kSame, DTypeSet::kNumber>(input, other);
    case Rounding::kFloor:
      return BinaryOpInplace<FloorDivideFunctor, ResultKind::kSame, DTypeSet::kNumber>(input, other);
  }
  OF_ASSERT(false) << "unreachable";
}

// ---- nan_to_num ----

namespace {
NanToNumFunctor MakeNanToNum(DType dt, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  // Defaults: the largest / lowest finite value of the input's own dtype (of its parts' dtype for
  // complex).
  if (IsComplex(dt)) dt = ToRealDType(dt);
  double big = std::numeric_limits<double>::max();
  if (dt == DType::kFloat16) big = 65504.0;
  if (dt == DType::kBFloat16) big = 3.3895313892515355e38;
  if (dt == DType::kFloat32) big = std::numeric_limits<float>::max();
  return NanToNumFunctor{nan, posinf.value_or(big), neginf.value_or(-big)};
}
}  // namespace

Tensor NanToNum(const Tensor& input, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  OpScope scope("nan_to_num");
  return UnaryOp<NanToNumFunctor, ResultKind::kSame, DTypeSet::kAll>(
      input, MakeNanToNum(input.dtype(), nan, posinf, neginf));
}

Tensor& NanToNum_(Tensor& input, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  OpScope scope("nan_to_num_");
  return UnaryOpInplace<NanToNumFunctor, ResultKind::kSame, DTypeSet::kAll>(
      input, MakeNanToNum(input.dtype(), nan, posinf, neginf));
}

// ---- float_power: pow computed in float64 ----

namespace {
// (CastTo keeps a Python number a Python number: it must not decide the device.)
Tensor AsDouble(const Tensor& t) { return CastTo(t, DType::kFloat64); }
}  // namespace

Tensor FloatPower(const Tensor& input, const Tensor& exponent) {
  OpScope scope("float_power");
  // Complex operands: the double-precision complex power (complex128), as PyTorch.
  if (IsComplex(input.dtype()) || IsComplex(exponent.dtype()))
    return BinaryOp<PowFunctor, ResultKind::kSame, DTypeSet::kAll>(CastTo(input, DType::kComplex128),
                                                                    CastTo(exponent, DType::kComplex128));
  return BinaryOp<PowFunctor, ResultKind::kSame, DTypeSet::kAll>(AsDouble(input), AsDouble(exponent));
}

Tensor& FloatPower_(Tensor& input, const Tensor& exponent) {
  OpScope scope("float_power_");
  // The result's dtype: complex128 when either operand is complex, else float64; self must have it.
  const DType want = IsComplex(input.dtype()) || IsComplex(exponent.dtype()) ? DType::kComplex128 : DType::kFloat64;
  OF_CHECK(input.dtype() == want) << "the base given to float_power_ has dtype " << DTypeName(input.dtype())
                                  << " but the operation's result requires dtype " << DTypeName(want);
  return BinaryOpInplace<PowFunctor, ResultKind::kSame, DTypeSet::kAll>(input, CastTo(exponent, want));
}

// ---- nextafter: 16-bit floats step to their own neighbour, not float's ----

namespace {

Tensor Nextafter16(const Tensor& input, const Tensor& other, DType dt) {
  const DimVector shape = BroadcastShapes(input.sizes(), other.sizes());
  CheckSameDevice(input, other);
  Tensor out = Empty(shape, dt, input.is_wrapped_number() ? other.device() : input.device());
  const Tensor a = CastTo(input, dt), b = CastTo(other, dt);
  if (out.device().type == DeviceType::kMeta) return out;
  Nextafter16Into(out, a, b);
  return out;
}

bool Is16Bit(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

}  // namespace

Tensor Nextafter(const Tensor& input, const Tensor& other) {
  OpScope scope("nextafter");
  const DType dt = ResultType({&input, &other});
  if (Is16Bit(dt)) return Nextafter16(input, other, dt);
  return BinaryOp<NextafterFunctor, ResultKind::kSame, DTypeSet::kFloat>(input, other);
}

Tensor& Nextafter_(Tensor& input, const Tensor& other) {
  OpScope scope("nextafter_");
  const DType dt = ResultType({&input, &other});
  if (!Is16Bit(dt)) return BinaryOpInplace<NextafterFunctor, ResultKind::kSame, DTypeSet::kFloat>(input, other);
  CheckInplaceResult(input, dt, BroadcastShapes(input.sizes(), other.sizes()));
  CopyInto(input, Nextafter16(input, other, dt));
  input.BumpVersion();
  return input;
}

// ---- positive: the input itself (as PyTorch returns self) ----

Tensor Positive(const Tensor& input) {
  OpScope scope("positive");
  OF_CHECK(input.dtype() != DType::kBool) << "The `+` operator, on a bool tensor is not supported.";
  return input;
}

}  // namespace oneflow
