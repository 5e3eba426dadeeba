// The CUDA side of CopyInto (ops/copy.h): called for a copy with a CUDA tensor on either side.
#pragma once
#include "core/tensor.h"

namespace oneflow::cuda {

void CopyInto(const Tensor& dst, const Tensor& src);

}  // namespace oneflow::cuda
