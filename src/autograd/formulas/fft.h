// Backward helpers of the fft family (src/ops/table/fft.yaml), PyTorch's fft_r2c_backward and
// fft_c2r_backward.
#pragma once
#include "autograd/functional.h"

namespace oneflow::functional {

// One-sided r2c = c2c of the real signal with the upper half dropped: pad the gradient back to
// the full length with zeros, inverse c2c (same normalisation), keep the real part.
Tensor FftR2cGrad(const Tensor& grad, const DimVector& dim, int64_t normalization, const DimVector& input_sizes);
// c2r fills the upper half by conjugate symmetry: r2c of the gradient, with the bins whose
// mirror image lies outside the one-sided range counted twice.
Tensor FftC2rGrad(const Tensor& grad, const DimVector& dim, int64_t normalization);

}  // namespace oneflow::functional
