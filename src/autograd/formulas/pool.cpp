#include "autograd/formulas/pool.h"

#include "autograd/formulas.h"
#include "decl/adaptive_avg_pool1d.h"
#include "decl/adaptive_avg_pool2d.h"
#include "decl/adaptive_avg_pool3d.h"
#include "decl/adaptive_avg_pool_grad.h"
#include "decl/avg_pool1d.h"
#include "decl/avg_pool2d.h"
#include "decl/avg_pool3d.h"
#include "decl/avg_pool_grad.h"
#include "decl/max_pool_grad.h"

namespace oneflow::functional {

namespace {
DimVector Trailing(const DimVector& v, int64_t k) { return DimVector(v.end() - k, v.end()); }
DimVector PerDim(const DimVector& v, int64_t k) { return v.size() == 1 ? DimVector(k, v[0]) : v; }
}  // namespace

Tensor MaxPoolInputGrad(const Tensor& grad, const Tensor& indices, const Tensor& input, int64_t k) {
  return functional::MaxPoolGrad(grad, indices, input, k);
}

Tensor AvgPoolInputGrad(const Tensor& grad, const Tensor& input, const DimVector& kernel_size,
                        const std::optional<DimVector>& stride, const DimVector& padding, bool ceil_mode,
                        bool count_include_pad, std::optional<int64_t> divisor_override, int64_t k) {
  const DimVector ks = PerDim(kernel_size, k);
  const DimVector st = stride && !stride->empty() ? PerDim(*stride, k) : ks;
  return functional::AvgPoolGrad(grad, input, ks, st, PerDim(padding, k), ceil_mode,
                                 count_include_pad, divisor_override);
}

Tensor AvgPoolNd(const Tensor& x, const DimVector& kernel_size, const DimVector& stride, const DimVector& padding,
                 bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  switch (kernel_size.size()) {
    case 1: return functional::AvgPool1d(x, kernel_size, stride, padding, ceil_mode, count_include_pad);
    case 2:
      return functional::AvgPool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
    default:
      return functional::AvgPool3d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  }
}

Tensor AdaptiveAvgPoolInputGrad(const Tensor& grad, const Tensor& input, int64_t k) {
  return functional::AdaptiveAvgPoolGrad(grad, input, k);
}

Tensor AdaptiveAvgPoolNd(const Tensor& x, const DimVector& out_sizes, int64_t k) {
  const DimVector o = Trailing(out_sizes, k);
  switch (k) {
    case 1: return functional::AdaptiveAvgPool1d(x, o);
    case 2: return functional::AdaptiveAvgPool2d(x, o);
    default: return functional::AdaptiveAvgPool3d(x, o);
  }
}

}  // namespace oneflow::functional
