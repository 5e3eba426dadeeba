// PyTorch's result_type: dimensioned tensors outrank 0-d tensors, which outrank Python numbers;
// a lower tier only matters when its category (bool < integral < floating) is higher.
#pragma once
#include <initializer_list>

#include "core/tensor.h"

namespace oneflow {

DType ResultType(std::initializer_list<const Tensor*> operands);
// In-place ops and `out` may not narrow a category (float result into an int tensor, etc.).
bool CanCast(DType from, DType to);

}  // namespace oneflow
