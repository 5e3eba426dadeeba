#include "autograd/formulas/fft.h"

#include "autograd/formulas.h"
#include "decl/cat.h"
#include "decl/fft_c2c.h"
#include "decl/fft_r2c.h"
#include "decl/full.h"
#include "decl/real.h"
#include "decl/zeros.h"

namespace oneflow::functional {

Tensor FftR2cGrad(const Tensor& grad, const DimVector& dim, int64_t normalization, const DimVector& input_sizes) {
  const int last = WrapDim(dim.back(), grad.dim());
  const int64_t full = input_sizes[last], half = grad.sizes()[last];
  Tensor g = grad;
  if (full > half) {
    DimVector zs = grad.sizes();
    zs[last] = full - half;
    g = functional::Cat({grad, functional::Zeros(zs, grad.dtype(), grad.device(), false)}, last);
  }
  return functional::Real(functional::FftC2c(g, dim, normalization, false));
}

Tensor FftC2rGrad(const Tensor& grad, const DimVector& dim, int64_t normalization) {
  Tensor gi = functional::FftR2c(grad, dim, normalization, true);
  const int last = WrapDim(dim.back(), grad.dim());
  const int64_t half = gi.sizes()[last], double_length = grad.sizes()[last] - half;
  if (double_length <= 0) return gi;
  // Bins 1 .. double_length stand for two bins of the full spectrum each.
  DimVector ws(grad.dim(), 1);
  auto piece = [&](int64_t n, double v) {
    ws[last] = n;
    return functional::Full(ws, Scalar(v), ToRealDType(gi.dtype()), gi.device(), false);
  };
  std::vector<Tensor> parts = {piece(1, 1.0), piece(double_length, 2.0)};
  if (half - 1 - double_length > 0) parts.push_back(piece(half - 1 - double_length, 1.0));
  return gi * functional::Cat(parts, last);
}

}  // namespace oneflow::functional
