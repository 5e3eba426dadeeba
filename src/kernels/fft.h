// Discrete Fourier transforms on FFTW (docs/decisions.md): complex-to-complex, real-to-complex
// (one-sided) and complex-to-real over any subset of dims, the others batched in the same plan.
#pragma once
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// out = unnormalised DFT of `in` over `dims` (sign -1 forward, +1 backward), then * scale.
// in: complex; out: complex of the same shape, contiguous.
void FftC2cKernel(const Tensor& in, const Tensor& out, const DimVector& dims, bool forward, double scale);
// in: real; out: complex with out.sizes()[dims.back()] == in.sizes()[dims.back()] / 2 + 1.
void FftR2cKernel(const Tensor& in, const Tensor& out, const DimVector& dims, double scale);
// in: complex (one-sided along dims.back()); out: real with the full signal length there.
void FftC2rKernel(const Tensor& in, const Tensor& out, const DimVector& dims, double scale);

// Their kernel interfaces (Note [Kernel registry]): CPU in kernels/fft.cpp (FFTW), CUDA in
// cuda/fft.cu (cuFFT).
namespace kernels {
struct FftC2cKernel {
  static constexpr const char* kName = "fft_c2c";
  using Fn = void (*)(const Tensor& in, const Tensor& out, const DimVector& dims, bool forward, double scale);
  using Writes = KernelWrites<1>;
};
struct FftR2cKernel {
  static constexpr const char* kName = "fft_r2c";
  using Fn = void (*)(const Tensor& in, const Tensor& out, const DimVector& dims, double scale);
  using Writes = KernelWrites<1>;
};
struct FftC2rKernel {
  static constexpr const char* kName = "fft_c2r";
  using Fn = void (*)(const Tensor& in, const Tensor& out, const DimVector& dims, double scale);
  using Writes = KernelWrites<1>;
};
}  // namespace kernels

}  // namespace oneflow
