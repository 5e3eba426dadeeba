// FFTs of CUDA tensors on cuFFT: the CUDA side of kernels/fft.h, same contracts (out contiguous,
// dims unique, dims.back() the halved dim of r2c / c2r). Builds without cuFFT throw the
// OF_THROW_NO_KERNEL error, so the FFT ops run on host copies (Note [Host fallback]).
#pragma once
#include "core/tensor.h"

namespace oneflow::cuda {

void FftC2c(const Tensor& in, const Tensor& out, const DimVector& dims, bool forward, double scale);
void FftR2c(const Tensor& in, const Tensor& out, const DimVector& dims, double scale);
void FftC2r(const Tensor& in, const Tensor& out, const DimVector& dims, double scale);

}  // namespace oneflow::cuda
