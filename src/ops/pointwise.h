// The generic bodies of pointwise ops: dtype rules, broadcasting, output allocation, in-place
// checks, then the engine (kernels/loop.h). Generated op entries instantiate these with functors.
#pragma once
#include "kernels/functors.h"
#include "kernels/loop.h"
#include "ops/copy.h"
#include "ops/promotion.h"
#include "decl/empty.h"

namespace oneflow {

enum class ResultKind { kSame, kFloat, kBool };      // output dtype vs computation dtype
enum class DTypeSet { kAll, kNumber, kIntegral, kFloat };  // dtypes an op computes in

void CheckDTypeSet(DTypeSet set, DType compute);
// For integer //, %, fmod, pow: divisors must be non-zero / exponents non-negative (else the
// CPU would trap); found before the kernel writes anything.
void CheckIntegerDivisor(const Tensor& b);
void CheckIntegerExponent(const Tensor& b);
DType ComputeDType(DType common, ResultKind rk);

template <DTypeSet S, typename F>
decltype(auto) DispatchSet(DType t, F&& f) {
  if constexpr (S == DTypeSet::kFloat) {
    return DispatchFloat(t, std::forward<F>(f));
  } else if constexpr (S == DTypeSet::kIntegral) {
    switch (t) {
      case DType::kBool: return f(Tag<bool>{});
      case DType::kInt8: return f(Tag<int8_t>{});
      case DType::kUInt8: return f(Tag<uint8_t>{});
      case DType::kInt32: return f(Tag<int32_t>{});
      case DType::kInt64: return f(Tag<int64_t>{});
      default: break;
    }
    OF_THROW(kType) << "expected a bool or integer tensor, got " << DTypeName(t);
  } else {
    return DispatchAll(t, std::forward<F>(f));
  }
}

// Note [Complex functors] (kernels/functors.h): complex inputs only reach functors that opt in.
template <typename F>
void CheckDTypes(DTypeSet set, DType compute) {
  if (IsComplex(compute)) {
    if constexpr (kComplexKind<F> == 0) ThrowComplexNotImplemented(compute);
    return;
  }
  CheckDTypeSet(set, compute);
}

template <typename F, ResultKind RK>
DType OutDType(DType compute) {
  if (RK == ResultKind::kBool) return DType::kBool;
  if (kComplexKind<F> == 2 && IsComplex(compute)) return ToRealDType(compute);
  return compute;
}

// Dispatches the compute dtype: complex to the complex types for functors that opt in, the rest
// through the op's real set.
template <typename F, DTypeSet S, typename G>
void DispatchCompute(DType compute, G&& g) {
  if (IsComplex(compute)) {
    if constexpr (kComplexKind<F> != 0) DispatchComplex(compute, std::forward<G>(g));
    return;
  }
  DispatchSet<S>(compute, std::forward<G>(g));
}

// The element type a functor's result is stored as (OutDType's C++ side).
template <typename T> struct RealOf { using type = T; };
template <typename T> struct RealOf<std::complex<T>> { using type = T; };
template <typename F, ResultKind RK, typename T>
using OutT = std::conditional_t<RK == ResultKind::kBool, bool,
                                std::conditional_t<kComplexKind<F> == 2, typename RealOf<T>::type, T>>;

void CheckInplaceResult(const Tensor& self, DType result, const DimVector& shape);

// Functors may carry the op's attributes (leaky_relu's slope): the entries pass an instance.
template <typename F, ResultKind RK, DTypeSet S>
void RunUnary(const Tensor& out, const Tensor& in, DType compute, const F& f) {
  const Tensor* ops[2] = {&out, &in};
  LoopPlan plan = MakePlan(out.sizes(), ops, 2);
  if (out.device().type == DeviceType::kMeta) return;
  DispatchCompute<F, S>(compute, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using R = OutT<F, RK, T>;
    RunLoop(plan, [&f](char** p, const int64_t* s, int64_t n) { UnaryInner<R, T>(p, s, n, f); });
  });
}

template <typename F, ResultKind RK, DTypeSet S>
Tensor UnaryOp(const Tensor& in, const F& f = F{}) {
  DType compute = ComputeDType(in.dtype(), RK);
  CheckDTypes<F>(S, compute);
  Tensor out = Empty(in.sizes(), OutDType<F, RK>(compute), in.device());
  RunUnary<F, RK, S>(out, CastTo(in, compute), compute, f);
  return out;
}

template <typename F, ResultKind RK, DTypeSet S>
Tensor& UnaryOpInplace(Tensor& self, const F& f = F{}) {
  DType compute = ComputeDType(self.dtype(), RK);
  CheckDTypes<F>(S, compute);
  if constexpr (kComplexKind<F> == 2) {  // abs_: a real result can't replace complex values
    OF_CHECK(!IsComplex(compute)) << "In-place form is not supported for complex tensors";
  }
  CheckInplaceResult(self, OutDType<F, RK>(compute), self.sizes());
  if (compute == self.dtype() && OutDType<F, RK>(compute) == compute) {
    RunUnary<F, RK, S>(self, self, compute, f);
  } else {
    CopyInto(self, UnaryOp<F, RK, S>(self, f));
  }
  self.BumpVersion();
  return self;
}

template <typename F, ResultKind RK, DTypeSet S>
void RunBinary(const Tensor& out, const Tensor& a, const Tensor& b, DType compute, const F& f) {
  const Tensor* ops[3] = {&out, &a, &b};
  LoopPlan plan = MakePlan(out.sizes(), ops, 3);
  if (out.device().type == DeviceType::kMeta) return;
  DispatchCompute<F, S>(compute, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using R = OutT<F, RK, T>;
    RunLoop(plan, [&f](char** p, const int64_t* s, int64_t n) { BinaryInner<R, T>(p, s, n, f); });
  });
}

// Integer division-like functors need their divisor checked (see CheckIntegerDivisor).
template <typename F> constexpr int kIntCheck = 0;  // 1: divisor, 2: exponent
template <> constexpr int kIntCheck<FloorDivideFunctor> = 1;
template <> constexpr int kIntCheck<RemainderFunctor> = 1;
template <> constexpr int kIntCheck<FmodFunctor> = 1;
template <> constexpr int kIntCheck<PowFunctor> = 2;

template <typename F>
void CheckIntegerOperand(const Tensor& b, DType compute) {
  if constexpr (kIntCheck<F> != 0) {
    if (IsFloating(compute) || IsComplex(compute) || b.device().type == DeviceType::kMeta) return;
    if constexpr (kIntCheck<F> == 1) CheckIntegerDivisor(b); else CheckIntegerExponent(b);
  }
}

template <typename F, ResultKind RK, DTypeSet S>
Tensor BinaryOp(const Tensor& a, const Tensor& b, const F& f = F{}) {
  DType compute = ComputeDType(ResultType({&a, &b}), RK);
  CheckDTypes<F>(S, compute);
  DimVector shape = BroadcastShapes(a.sizes(), b.sizes());
  CheckSameDevice(a, b);
  CheckIntegerOperand<F>(b, compute);
  // A Python number never decides the device: `2 + meta_tensor` stays on meta.
  const Device& dev = a.is_wrapped_number() ? b.device() : a.device();
  Tensor out = Empty(shape, OutDType<F, RK>(compute), dev);
  RunBinary<F, RK, S>(out, CastTo(a, compute), CastTo(b, compute), compute, f);
  return out;
}

template <typename F, ResultKind RK, DTypeSet S>
Tensor& BinaryOpInplace(Tensor& self, const Tensor& b, const F& f = F{}) {
  DType compute = ComputeDType(ResultType({&self, &b}), RK);
  CheckDTypes<F>(S, compute);
  DimVector shape = BroadcastShapes(self.sizes(), b.sizes());
  CheckSameDevice(self, b);
  CheckInplaceResult(self, OutDType<F, RK>(compute), shape);
  CheckIntegerOperand<F>(b, compute);
  // Writing straight into self is safe unless b overlaps self's memory differently from
  // element-for-element (x.add_(x) is fine; x.add_(x.t()) or shifted slices are not).
  const bool b_overlaps = b.storage() == self.storage() &&
      !(b.offset() == self.offset() && b.sizes() == self.sizes() && b.strides() == self.strides());
  if (compute == self.dtype() && OutDType<F, RK>(compute) == compute && !b_overlaps) {
    RunBinary<F, RK, S>(self, self, CastTo(b, compute), compute, f);
  } else {
    CopyInto(self, BinaryOp<F, RK, S>(self, b, f));
  }
  self.BumpVersion();
  return self;
}

// Three operands (lerp, addcmul, where-like ops): promotion and broadcasting over all three.
template <typename F, ResultKind RK, DTypeSet S>
void RunTernary(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, DType compute,
                const F& f) {
  const Tensor* ops[4] = {&out, &a, &b, &c};
  LoopPlan plan = MakePlan(out.sizes(), ops, 4);
  if (out.device().type == DeviceType::kMeta) return;
  DispatchCompute<F, S>(compute, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using R = OutT<F, RK, T>;
    RunLoop(plan, [&f](char** p, const int64_t* s, int64_t n) { TernaryInner<R, T>(p, s, n, f); });
  });
}

template <typename F, ResultKind RK, DTypeSet S>
Tensor TernaryOp(const Tensor& a, const Tensor& b, const Tensor& c, const F& f = F{}) {
  DType compute = ComputeDType(ResultType({&a, &b, &c}), RK);
  CheckDTypes<F>(S, compute);
  DimVector shape = BroadcastShapes(BroadcastShapes(a.sizes(), b.sizes()), c.sizes());
  CheckSameDevice(a, b);
  CheckSameDevice(a, c);
  const Device& dev = !a.is_wrapped_number() ? a.device() : !b.is_wrapped_number() ? b.device() : c.device();
  Tensor out = Empty(shape, OutDType<F, RK>(compute), dev);
  RunTernary<F, RK, S>(out, CastTo(a, compute), CastTo(b, compute), CastTo(c, compute), compute, f);
  return out;
}

template <typename F, ResultKind RK, DTypeSet S>
Tensor& TernaryOpInplace(Tensor& self, const Tensor& b, const Tensor& c, const F& f = F{}) {
  DType compute = ComputeDType(ResultType({&self, &b, &c}), RK);
  CheckDTypes<F>(S, compute);
  DimVector shape = BroadcastShapes(BroadcastShapes(self.sizes(), b.sizes()), c.sizes());
  CheckInplaceResult(self, OutDType<F, RK>(compute), shape);
  // Always through a temporary: b or c may overlap self.
  CopyInto(self, TernaryOp<F, RK, S>(self, b, c, f));
  self.BumpVersion();
  return self;
}

}  // namespace oneflow
