#include "core/dtype.h"

namespace oneflow {

namespace {
DType default_float = DType::kFloat32;
}

int64_t ElementSize(DType t) {
  static constexpr int64_t kSizes[kNumDTypes] = {1, 1, 1, 4, 8, 2, 2, 4, 8, 8, 16, 2};
  return kSizes[static_cast<int>(t)];
}

const char* DTypeName(DType t) {
  static const char* kNames[kNumDTypes] = {"bool",    "int8",     "uint8",   "int32",  "int64",
                                           "float16", "bfloat16", "float32", "float64",
                                           "complex64", "complex128", "int16"};
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
                                           "ComplexDouble", "Short"};
  return kNames[static_cast<int>(t)];
}

void ThrowComplexNotImplemented(DType t) {
  OF_THROW(kRuntime) << "not implemented for '" << TorchTypeName(t) << "'";
  __builtin_unreachable();  // the builder above throws when its statement ends
}

namespace {
// The integral dtypes by width (Note [DType numbers]: the enum's order is not theirs).
int IntegralRank(DType t) {
  switch (t) {
    case DType::kInt8: case DType::kUInt8: return 1;
    case DType::kInt16: return 2;
    case DType::kInt32: return 3;
    case DType::kInt64: return 4;
    default: return 0;
  }
}
}  // namespace

// PyTorch's table restricted to our dtypes.
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
  // Both integral: the wider; uint8 with int8 needs the next signed width, int16 (as PyTorch).
  if ((a == DType::kUInt8 && b == DType::kInt8) || (a == DType::kInt8 && b == DType::kUInt8))
    return DType::kInt16;
  return IntegralRank(a) >= IntegralRank(b) ? a : b;
}

}  // namespace oneflow
