#include "ops/pointwise.h"
#include "decl/contiguous.h"

namespace oneflow {

void CheckDTypeSet(DTypeSet set, DType compute) {
  switch (set) {
    case DTypeSet::kAll: return;
    case DTypeSet::kNumber:
      OF_CHECK(compute != DType::kBool) << "not supported for bool tensors";
      return;
    case DTypeSet::kIntegral:
      OF_CHECK(!IsFloating(compute))
          << "only supported for integer and bool tensors, got " << DTypeName(compute);
      return;
    case DTypeSet::kFloat:
      OF_CHECK(IsFloating(compute))
          << "only supported for floating point tensors, got " << DTypeName(compute);
      return;
  }
}

DType ComputeDType(DType common, ResultKind rk) {
  if (rk == ResultKind::kFloat && !IsFloating(common) && !IsComplex(common))
    return DefaultFloatDType();
  return common;
}

namespace {
// Upstream OneFlow's Shape::ToString: "(2,3)", "(2,)".
std::string UpstreamShapeStr(const DimVector& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}
}  // namespace

// Note [Upstream's words] (src/autograd/meta.cpp): PyTorch's message, then upstream's in brackets.
DimVector InplaceBroadcastShape(const Tensor& self, const Tensor& other) {
  try {
    return BroadcastShapes(self.sizes(), other.sizes());
  } catch (const Error& e) {
    throw Error(e.kind(), std::string(e.what()) + " [OneFlow: Tensor with shape " + UpstreamShapeStr(self.sizes()) +
                              " doesn't match the broadcast shape in an inplace operation]");
  }
}

void CheckInplaceResult(const Tensor& self, DType result, const DimVector& shape) {
  for (int d = 0; d < self.dim(); ++d)
    OF_CHECK(!(self.strides()[d] == 0 && self.sizes()[d] > 1))
        << "unsupported operation: more than one element of the written-to tensor refers to a "
           "single memory location. Please clone() the tensor before performing the operation.";
  OF_CHECK(CanCast(result, self.dtype()))
      << "result type " << DTypeName(result) << " can't be cast to the desired output type "
      << DTypeName(self.dtype());
  OF_CHECK(shape == self.sizes()) << "output with shape " << ShapeStr(self.sizes())
                                  << " doesn't match the broadcast shape " << ShapeStr(shape) << " [OneFlow: Can not "
                                  << "expand origin shape " << UpstreamShapeStr(shape) << " to "
                                  << UpstreamShapeStr(self.sizes()) << "]";
}

namespace {
template <typename Pred>
bool AnyElement(const Tensor& b, Pred pred) {
  bool found = false;
  Tensor c = Contiguous(OnHost(b));  // CUDA divisors are checked in a host copy (a sync)
  DispatchAll(c.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T* p = c.data<T>();
    for (int64_t i = 0; i < c.numel() && !found; ++i) found = pred(static_cast<OpMath<T>>(p[i]));
  });
  return found;
}
}  // namespace

void CheckIntegerDivisor(const Tensor& b) {
  OF_CHECK(!AnyElement(b, [](auto v) { return v == 0; })) << "ZeroDivisionError";
}

void CheckIntegerExponent(const Tensor& b) {
  OF_CHECK(!AnyElement(b, [](auto v) {
    if constexpr (std::is_same_v<decltype(v), bool>) return false;  // never negative
    else return v < 0;
  }))
      << "Integers to negative integer powers are not allowed.";
}

// `check:` of sign (src/ops/table/unary_same.yaml): its functor is sgn's, which opts in to
// complex input, but PyTorch's sign refuses complex (z / |z| is sgn's answer, not NumPy's sign).
void CheckSignNotComplex(const Tensor& input) {
  if (IsComplex(input.dtype()))
    OF_THROW(kNotImplemented) << "Unlike NumPy, sign is not intended to support complex numbers. "
                                 "Please use sgn instead.";
}

}  // namespace oneflow

namespace oneflow {

void ThrowNoCudaKernel(DType compute, int device) {
  if (IsComplex(compute))
    OF_THROW_NO_KERNEL(device) << "not implemented for '" << DTypeName(compute)
                              << "' tensors on CUDA yet; move the inputs to the CPU with .cpu()";
  OF_THROW_NO_KERNEL(device) << "not implemented for 'cuda' tensors in this build (no CUDA kernel is "
                               "registered for it); move the inputs to the CPU with .cpu()";
  __builtin_unreachable();  // the error builder throws when the statement ends
}

}  // namespace oneflow
