#include "autograd/formulas/conv.h"

#include "autograd/formulas.h"
#include "decl/conv1d.h"
#include "decl/conv2d.h"
#include "decl/conv3d.h"
#include "decl/conv_transpose1d.h"
#include "decl/conv_transpose2d.h"
#include "decl/conv_transpose3d.h"
#include "decl/narrow.h"
#include "decl/sum.h"

namespace oneflow::functional {

Tensor ConvNdTo(const Tensor& x, const Tensor& w, const DimVector& out_sizes, const DimVector& stride,
                const DimVector& padding, const DimVector& dilation, int64_t groups) {
  Tensor y;
  switch (w.dim()) {
    case 3: y = functional::Conv1d(x, w, Tensor(), stride, padding, dilation, groups); break;
    case 4: y = functional::Conv2d(x, w, Tensor(), stride, padding, dilation, groups); break;
    default: y = functional::Conv3d(x, w, Tensor(), stride, padding, dilation, groups); break;
  }
  const int k = w.dim() - 2, lead = y.dim() - k;
  for (int d = 0; d < k; ++d)
    if (y.sizes()[lead + d] > out_sizes[lead + d]) y = functional::Narrow(y, lead + d, 0, out_sizes[lead + d]);
  return y;
}

Tensor ConvInputGrad(const Tensor& grad, const Tensor& w, const DimVector& input_sizes, const DimVector& stride,
                     const DimVector& padding, const DimVector& dilation, int64_t groups) {
  const int k = w.dim() - 2, lead = grad.dim() - k;
  auto at = [](const DimVector& v, int d) { return v[v.size() == 1 ? 0 : d]; };
  DimVector output_padding;
  for (int d = 0; d < k; ++d) {
    const int64_t s = at(stride, d), p = at(padding, d), dl = at(dilation, d);
    const int64_t natural = (grad.sizes()[lead + d] - 1) * s - 2 * p + dl * (w.sizes()[2 + d] - 1) + 1;
    output_padding.push_back(input_sizes[lead + d] - natural);
  }
  switch (k) {
    case 1: return functional::ConvTranspose1d(grad, w, Tensor(), stride, padding, output_padding, groups, dilation);
    case 2: return functional::ConvTranspose2d(grad, w, Tensor(), stride, padding, output_padding, groups, dilation);
    default: return functional::ConvTranspose3d(grad, w, Tensor(), stride, padding, output_padding, groups, dilation);
  }
}

Tensor ConvBiasGrad(const Tensor& grad, int64_t weight_rank) {
  const int channel = grad.dim() == weight_rank ? 1 : 0;
  DimVector dims;
  for (int d = 0; d < grad.dim(); ++d)
    if (d != channel) dims.push_back(d);
  return functional::Sum(grad, dims, false, std::nullopt);
}

}  // namespace oneflow::functional
