// Pooling kernels of CUDA tensors (src/cuda/pool.cu): the CUDA side of kernels/pool.h, with the
// same contracts; kernels/pool.cpp branches here for CUDA tensors.
#pragma once
#include <cstdint>
#include <optional>

#include "kernels/pool.h"

namespace oneflow::cuda {

void MaxPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices);
void AvgPoolForward(const PoolGeom& g, bool count_include_pad, std::optional<int64_t> divisor, const Tensor& x,
                    const Tensor& y);
void AvgPoolBackward(const PoolGeom& g, bool count_include_pad, std::optional<int64_t> divisor, const Tensor& dy,
                     const Tensor& dx);
void AdaptiveAvgPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y);
void AdaptiveAvgPoolBackward(const PoolGeom& g, const Tensor& dy, const Tensor& dx);
void AdaptiveMaxPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices);
void PoolScatterAdd(const PoolGeom& g, const Tensor& dy, const Tensor& indices, const Tensor& dx);
void PoolGather(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y);
void PoolScatter(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y);

}  // namespace oneflow::cuda
