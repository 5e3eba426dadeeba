#include "core/dtype.h"

namespace oneflow {

namespace {
DType default_float = DType::kFloat32;
}

int64_t ElementSize(DType t) {
  static constexpr int64_t kSizes[kNumDTypes] = {1, 1, 1, 4, 8, 2, 2, 4, 8, 8, 16};
  return kSizes[static_cast<int>(t)];
}

const char* DTypeName(DType t) {
  static const char* kNames[kNumDTypes] = {"bool",    "int8",     "uint8",   "int32",  "int64",
                                           "float16", "bfloat16", "float32", "float64",
                                           "complex64", "complex128"};
  return kNames[static_cast<int>(t)];
}

DType DefaultFloatDType() { return default_float; }
void SetDefaultFloatDType(DType t) {
  // PyTorch's wording (upstream's tests look for it), then the dtype given.
  OF_CHECK_TYPE(IsFloating(t)) << "only floating-point types are supported as the default type, got "
                               << DTypeName(t);
  default_float = t;
}

DType ToRealDType(DType t) {
  if (t == DType::kComplex64) return DType::kFloat32;
  if (t == DType::kComplex128) return DType::kFloat64;
  return t;
}

DType ToComplexDType(DType t) {
  if (IsComplex(t)) return t;
  if (!IsFloating(t)) t = DefaultFloatDType();
  return t == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64;
}

const char* TorchTypeName(DType t) {
  static const char* kNames[kNumDTypes] = {"Bool", "Char", "Byte", "Int", "Long", "Half",
                                           "BFloat16", "Float", "Double", "ComplexFloat",
                                           "ComplexDouble"};
  return kNames[static_cast<int>(t)];
}

void ThrowComplexNotImplemented(DType t) {
  OF_THROW(kRuntime) << "not implemented for '" << TorchTypeName(t) << "'";
  __builtin_unreachable();  // the builder above throws when its statement ends
}

// PyTorch's table restricted to our dtypes. There is no int16: uint8 with int8 promotes to int32
// (PyTorch gives int16), recorded in docs/decisions.md.
DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  if (IsComplex(a) || IsComplex(b)) {
    // complex wins; its width covers the widest float part (float64 + complex64 = complex128).
    const bool wide = a == DType::kComplex128 || b == DType::kComplex128 ||
                      a == DType::kFloat64 || b == DType::kFloat64;
    return wide ? DType::kComplex128 : DType::kComplex64;
  }
  const bool fa = IsFloating(a), fb = IsFloating(b);
  if (fa && fb) {
    if ((a == DType::kFloat16 && b == DType::kBFloat16) ||
        (a == DType::kBFloat16 && b == DType::kFloat16))
      return DType::kFloat32;
    return a > b ? a : b;  // enum order float16/bfloat16 < float32 < float64
  }
  if (fa) return a;
  if (fb) return b;
  // Both integral.
  if ((a == DType::kUInt8 && b == DType::kInt8) || (a == DType::kInt8 && b == DType::kUInt8))
    return DType::kInt32;
  return a > b ? a : b;  // int8/uint8 < int32 < int64
}

}  // namespace oneflow
