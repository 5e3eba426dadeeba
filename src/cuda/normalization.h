// Batch norm, layer norm and group norm of CUDA tensors (src/cuda/normalization.cu): the CUDA side of
// kernels/normalization.h, same contracts; kernels/normalization.cpp branches here.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace oneflow::cuda {

void BatchNormStats(const Tensor& x, int64_t n, int64_t c, int64_t s, double eps, const Tensor& mean,
                    const Tensor& invstd, const Tensor& var_unbiased);
void BatchNormApply(const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean, const Tensor& invstd,
                    const Tensor& weight, const Tensor& bias, const Tensor& y);
void BatchNormBackward(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, const Tensor& mean,
                       const Tensor& invstd, const Tensor& weight, bool training, const Tensor& dx,
                       const Tensor& dw, const Tensor& db);
void LayerNormForward(const Tensor& x, int64_t rows, int64_t cols, double eps, const Tensor& weight,
                      const Tensor& bias, const Tensor& y, const Tensor& mean, const Tensor& rstd);
void LayerNormBackward(const Tensor& dy, const Tensor& x, int64_t rows, int64_t cols, const Tensor& mean,
                       const Tensor& rstd, const Tensor& weight, const Tensor& dx, const Tensor& dw,
                       const Tensor& db);

void GroupNormForward(const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g, double eps,
                      const Tensor& weight, const Tensor& bias, const Tensor& y, const Tensor& mean,
                      const Tensor& rstd);
void GroupNormBackward(const Tensor& dy, const Tensor& x, int64_t n, int64_t c, int64_t s, int64_t g,
                       const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& dx,
                       const Tensor& dw, const Tensor& db);

}  // namespace oneflow::cuda
