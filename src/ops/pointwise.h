// The generic bodies of pointwise ops: dtype rules, broadcasting, output allocation, in-place
// checks, then the engine (kernels/loop.h). Generated op entries instantiate these with functors.
#pragma once
#include <cstring>

#include "kernels/functors.h"
#include "kernels/loop.h"
#include "ops/pointwise_kinds.h"
#include "ops/copy.h"
#include "ops/promotion.h"
#include "decl/empty.h"

namespace oneflow {

void CheckDTypeSet(DTypeSet set, DType compute);
// For integer //, %, fmod, pow: divisors must be non-zero / exponents non-negative (else the
// CPU would trap); found before the kernel writes anything.
void CheckIntegerDivisor(const Tensor& b);
void CheckIntegerExponent(const Tensor& b);
DType ComputeDType(DType common, ResultKind rk);

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

void CheckInplaceResult(const Tensor& self, DType result, const DimVector& shape);
// The shape of self op other for an in-place op on self (BroadcastShapes, its error naming self's shape).
DimVector InplaceBroadcastShape(const Tensor& self, const Tensor& other);

[[noreturn]] void ThrowNoCudaKernel(DType compute, int device);
// The launch of a CUDA pointwise kernel over ops[0] (output, on the device) and ops[1..n]: the
// operands that are CPU scalars travel by value.
inline CudaLaunch CudaLaunchOf(const Tensor* const* ops, int n) {
  CudaLaunch l;
  l.device = ops[0]->device().index;
  for (int k = 1; k <= n; ++k) {
    if (ops[k]->device().type != DeviceType::kCPU) continue;
    l.host[k] = true;
    std::memcpy(l.bits[k], ops[k]->raw_ptr(), ops[k]->element_size());
  }
  return l;
}
// Note [CUDA pointwise kernels] (ops/pointwise_kinds.h).
template <typename F, ResultKind RK, DTypeSet S, int N>
void RunCudaPointwise(const LoopPlan& plan, const Tensor* const* ops, DType compute, const F& f) {
  auto fn = CudaPointwise<F, RK, S, N>::run;
  // complex: only functors with a complex meaning get here (Note [Complex on CUDA])
  if (!fn) ThrowNoCudaKernel(compute, ops[0]->device().index);
  fn(plan, CudaLaunchOf(ops, N), compute, f);
}

// Functors may carry the op's attributes (leaky_relu's slope): the entries pass an instance.
template <typename F, ResultKind RK, DTypeSet S>
void RunUnary(const Tensor& out, const Tensor& in, DType compute, const F& f) {
  const Tensor* ops[2] = {&out, &in};
  LoopPlan plan = MakePlan(out.sizes(), ops, 2, /*any_device=*/true);
  if (out.device().type == DeviceType::kMeta) return;
  if (out.device().type == DeviceType::kCUDA) return RunCudaPointwise<F, RK, S, 1>(plan, ops, compute, f);
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
  LoopPlan plan = MakePlan(out.sizes(), ops, 3, /*any_device=*/true);
  if (out.device().type == DeviceType::kMeta) return;
  if (out.device().type == DeviceType::kCUDA) return RunCudaPointwise<F, RK, S, 2>(plan, ops, compute, f);
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
    // (on CUDA the values stay on the device: PyTorch's CUDA kernels don't check either)
    if (IsFloating(compute) || IsComplex(compute) || b.device().type != DeviceType::kCPU) return;
    // Exponents: only a Python number is refused when negative, as in PyTorch; tensor exponents
    // follow integer arithmetic (PowFunctor: 1, -1 or 0).
    if constexpr (kIntCheck<F> == 1) CheckIntegerDivisor(b);
    else if (b.is_wrapped_number()) CheckIntegerExponent(b);
  }
}

template <typename F, ResultKind RK, DTypeSet S>
Tensor BinaryOp(const Tensor& a, const Tensor& b, const F& f = F{}) {
  DType compute = ComputeDType(ResultType({&a, &b}), RK);
  CheckDTypes<F>(S, compute);
  DimVector shape = BroadcastShapes(a.sizes(), b.sizes());
  CheckSameDevice(a, b);
  CheckIntegerOperand<F>(b, compute);
  // A Python number or CPU scalar never decides the device: `2 + meta_tensor` stays on meta.
  const Device& dev = OpDevice({&a, &b});
  Tensor out = Empty(shape, OutDType<F, RK>(compute), dev);
  RunBinary<F, RK, S>(out, CastTo(a, compute), CastTo(b, compute), compute, f);
  return out;
}

template <typename F, ResultKind RK, DTypeSet S>
Tensor& BinaryOpInplace(Tensor& self, const Tensor& b, const F& f = F{}) {
  DType compute = ComputeDType(ResultType({&self, &b}), RK);
  CheckDTypes<F>(S, compute);
  DimVector shape = InplaceBroadcastShape(self, b);
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
  LoopPlan plan = MakePlan(out.sizes(), ops, 4, /*any_device=*/true);
  if (out.device().type == DeviceType::kMeta) return;
  if (out.device().type == DeviceType::kCUDA) return RunCudaPointwise<F, RK, S, 3>(plan, ops, compute, f);
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
  const Device& dev = OpDevice({&a, &b, &c});
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
