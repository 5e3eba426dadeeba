#include "core/dtype.h"

namespace oneflow {

namespace {
DType default_float = DType::kFloat32;
}

int64_t ElementSize(DType t) {
  static constexpr int64_t kSizes[kNumDTypes] = {1, 1, 1, 4, 8, 2, 2, 4, 8};
  return kSizes[static_cast<int>(t)];
}

const char* DTypeName(DType t) {
  static const char* kNames[kNumDTypes] = {"bool",    "int8",     "uint8",   "int32",  "int64",
                                           "float16", "bfloat16", "float32", "float64"};
  return kNames[static_cast<int>(t)];
}

DType DefaultFloatDType() { return default_float; }
void SetDefaultFloatDType(DType t) {
  OF_CHECK_TYPE(IsFloating(t)) << "only floating point default dtypes are supported, got "
                               << DTypeName(t);
  default_float = t;
}

// PyTorch's table restricted to our dtypes. There is no int16: uint8 with int8 promotes to int32
// (PyTorch gives int16), recorded in docs/decisions.md.
DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
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
