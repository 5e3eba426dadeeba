// The fft family (fft.yaml): PyTorch's three primitives _fft_c2c / _fft_r2c / _fft_c2r. The
// flow.fft functions (python/oneflow/fft.py) resize inputs and pick dims and normalisation, then
// call these; kernels in kernels/fft.cpp (FFTW).
#include <cmath>

#include "kernels/fft.h"
#include "ops/copy.h"
#include "decl/empty.h"
#include "decl/fft_c2c.h"
#include "decl/fft_c2r.h"
#include "decl/fft_r2c.h"

namespace oneflow {

namespace {

// `normalization`: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the product of the signal sizes
// (PyTorch's fft_norm_mode).
double Scale(int64_t normalization, const Tensor& signal, const DimVector& dims) {
  OF_CHECK(normalization >= 0 && normalization <= 2) << "Invalid normalization mode: " << normalization;
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(signal.sizes()[d]);
  if (normalization == 0) return 1.0;
  return normalization == 1 ? 1.0 / std::sqrt(n) : 1.0 / n;
}

DimVector CheckDims(const Tensor& input, const DimVector& dim) {
  DimVector out;
  bool seen[kMaxDims] = {false};
  for (int64_t d : dim) {
    const int w = WrapDim(d, input.dim());
    OF_CHECK(!seen[w]) << "FFT dims must be unique";
    seen[w] = true;
    out.push_back(w);
  }
  for (int64_t d : out)
    OF_CHECK(input.sizes()[d] >= 1) << "Invalid number of data points (" << input.sizes()[d] << ") specified";
  return out;
}

}  // namespace

Tensor FftC2c(const Tensor& input, const DimVector& dim, int64_t normalization, bool forward) {
  OpScope scope("fft_c2c");
  OF_CHECK(IsComplex(input.dtype())) << "expects a complex input tensor, but got " << DTypeName(input.dtype());
  DimVector dims = CheckDims(input, dim);
  const double scale = Scale(normalization, input, dims);
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  if (dims.empty()) {
    CopyInto(out, input);
    return out;
  }
  FftC2cKernel(input, out, dims, forward, scale);
  return out;
}

Tensor FftR2c(const Tensor& input, const DimVector& dim, int64_t normalization, bool onesided) {
  OpScope scope("fft_r2c");
  OF_CHECK(input.dtype() == DType::kFloat32 || input.dtype() == DType::kFloat64)
      << "expects a float32 or float64 input tensor, but got " << DTypeName(input.dtype());
  OF_CHECK(onesided) << "only the one-sided transform is a primitive (fft of a real input "
                        "transforms its complex cast)";
  DimVector dims = CheckDims(input, dim);
  OF_CHECK(!dims.empty()) << "must transform at least one axis";
  const double scale = Scale(normalization, input, dims);
  DimVector sizes = input.sizes();
  sizes[dims.back()] = sizes[dims.back()] / 2 + 1;
  Tensor out = Empty(sizes, ToComplexDType(input.dtype()), input.device());
  FftR2cKernel(input, out, dims, scale);
  return out;
}

Tensor FftC2r(const Tensor& input, const DimVector& dim, int64_t normalization, int64_t last_dim_size) {
  OpScope scope("fft_c2r");
  OF_CHECK(IsComplex(input.dtype())) << "expects a complex input tensor, but got " << DTypeName(input.dtype());
  DimVector dims = CheckDims(input, dim);
  OF_CHECK(!dims.empty()) << "must transform at least one axis";
  OF_CHECK(last_dim_size >= 1) << "Invalid number of data points (" << last_dim_size << ") specified";
  OF_CHECK(input.sizes()[dims.back()] == last_dim_size / 2 + 1)
      << "expected " << last_dim_size / 2 + 1 << " one-sided input points along dim " << dims.back()
      << " for an output of " << last_dim_size << ", got " << input.sizes()[dims.back()];
  DimVector sizes = input.sizes();
  sizes[dims.back()] = last_dim_size;
  Tensor out = Empty(sizes, ToRealDType(input.dtype()), input.device());
  const double scale = Scale(normalization, out, dims);
  FftC2rKernel(input, out, dims, scale);
  return out;
}

}  // namespace oneflow
