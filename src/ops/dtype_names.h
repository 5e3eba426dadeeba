// PyTorch's scalar-type names (Float, Long, ...), which its error messages use and ours mirror.
#pragma once
#include "core/dtype.h"

namespace oneflow {

inline const char* TorchTypeName(DType t) {
  switch (t) {
    case DType::kBool: return "Bool";
    case DType::kInt8: return "Char";
    case DType::kUInt8: return "Byte";
    case DType::kInt32: return "Int";
    case DType::kInt64: return "Long";
    case DType::kFloat16: return "Half";
    case DType::kBFloat16: return "BFloat16";
    case DType::kFloat32: return "Float";
    case DType::kFloat64: return "Double";
  }
  return "?";
}

}  // namespace oneflow
